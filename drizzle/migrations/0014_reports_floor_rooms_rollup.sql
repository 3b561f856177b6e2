-- crm's projection of property objects keeps the floor and the room count of the object's last applied
-- upsert (null until one arrives), so the reports can split sales by floor band and room count.
ALTER TABLE "crm"."property_objects" ADD COLUMN "floor" integer;--> statement-breakpoint
ALTER TABLE "crm"."property_objects" ADD COLUMN "rooms" integer;--> statement-breakpoint
ALTER TABLE "crm"."property_objects" ADD CONSTRAINT "ck_crm_property_objects_rooms" CHECK ("rooms" IS NULL OR "rooms" >= 0);--> statement-breakpoint
-- A one-off fill of the rows projected before these columns existed: the upserts that carried floor and
-- rooms were applied already and will not come again. Later rows are kept by the projection consumer.
UPDATE "crm"."property_objects" c SET "floor" = p."floor", "rooms" = p."rooms"
  FROM "chessboard"."property_objects" p WHERE p."id" = c."id";--> statement-breakpoint
-- The reports' daily rollup (job reports-daily-rollup): per UTC day of booking creation and tenant, one
-- row per breakdown (dim: all | project | agent | floor | rooms | reason; key: the agent id, band, bucket
-- or cancellation reason, '' for none; project_id only on project rows). The `all` row keeps every step
-- duration (not an average) so medians stay exact.
CREATE TABLE "crm"."booking_daily_rollup" (
  "day" date NOT NULL,
  "tenant_id" uuid NOT NULL,
  "project_id" uuid,
  "dim" text NOT NULL,
  "key" text NOT NULL,
  "bookings" integer NOT NULL,
  "confirmed" integer NOT NULL,
  "paid" integer NOT NULL,
  "sold" integer NOT NULL,
  "active" integer NOT NULL,
  "cancelled" integer NOT NULL,
  "reserve_expired" integer NOT NULL,
  "booking_expired" integer NOT NULL,
  "confirm_secs" double precision[],
  "pay_secs" double precision[],
  "sell_secs" double precision[],
  CONSTRAINT "ck_booking_daily_rollup_dim" CHECK ("dim" IN ('all', 'project', 'agent', 'floor', 'rooms', 'reason'))
);--> statement-breakpoint
CREATE INDEX "ix_booking_daily_rollup_tenant_day" ON "crm"."booking_daily_rollup" USING btree ("tenant_id", "day");--> statement-breakpoint
CREATE INDEX "ix_booking_daily_rollup_day" ON "crm"."booking_daily_rollup" USING btree ("day");--> statement-breakpoint
-- One row per rolled-up day. settled: every booking created that day had ended when it was rolled up
-- (ended bookings never change, INV-BKG-8), so the report may read the day from the rollup; a day not
-- settled, or without a row, is read from crm.bookings.
CREATE TABLE "crm"."booking_rollup_days" (
  "day" date PRIMARY KEY NOT NULL,
  "settled" boolean NOT NULL,
  "bookings" integer NOT NULL,
  "rolled_up_at" timestamp (3) with time zone NOT NULL
);--> statement-breakpoint
CREATE INDEX "ix_booking_rollup_days_unsettled" ON "crm"."booking_rollup_days" USING btree ("day") WHERE NOT "settled";
