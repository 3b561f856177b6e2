CREATE SCHEMA "notifications";
--> statement-breakpoint
CREATE TABLE "notifications"."hold_deadlines" (
	"booking_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"deal_id" uuid NOT NULL,
	"property_object_id" uuid NOT NULL,
	"created_by" uuid,
	"phase" text,
	"deadline" timestamp (3) with time zone,
	"version" integer NOT NULL,
	"ended" boolean DEFAULT false NOT NULL,
	"soon_notified_deadline" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ck_hold_deadlines_phase" CHECK ("notifications"."hold_deadlines"."phase" IS NULL OR "notifications"."hold_deadlines"."phase" IN ('Reserve', 'Booking'))
);
--> statement-breakpoint
CREATE TABLE "notifications"."reads" (
	"notification_id" bigint NOT NULL,
	"user_id" uuid NOT NULL,
	"read_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notifications_reads_pk" PRIMARY KEY("notification_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "notifications"."notifications" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"message_id" uuid NOT NULL,
	"recipient" text NOT NULL,
	"recipient_user_id" uuid,
	"audience_role" text,
	"tenant_id" uuid NOT NULL,
	"type" text NOT NULL,
	"booking_id" uuid,
	"deal_id" uuid NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ck_notifications_recipient" CHECK (("notifications"."notifications"."recipient_user_id" IS NOT NULL) <> ("notifications"."notifications"."audience_role" IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "notifications"."inbox" (
	"consumer" text NOT NULL,
	"message_id" uuid NOT NULL,
	"topic" text DEFAULT '' NOT NULL,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"result" text NOT NULL,
	"detail" text,
	CONSTRAINT "notifications_inbox_pk" PRIMARY KEY("consumer","message_id"),
	CONSTRAINT "ck_notifications_inbox_result" CHECK ("notifications"."inbox"."result" IN ('applied', 'no-op', 'rejected'))
);
--> statement-breakpoint
ALTER TABLE "notifications"."reads" ADD CONSTRAINT "reads_notification_id_notifications_id_fk" FOREIGN KEY ("notification_id") REFERENCES "notifications"."notifications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ix_hold_deadlines_active" ON "notifications"."hold_deadlines" USING btree ("deadline") WHERE NOT ended;--> statement-breakpoint
CREATE INDEX "ix_notification_reads_user" ON "notifications"."reads" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ux_notifications_message_recipient" ON "notifications"."notifications" USING btree ("message_id","recipient");--> statement-breakpoint
CREATE INDEX "ix_notifications_user" ON "notifications"."notifications" USING btree ("recipient_user_id","id") WHERE recipient_user_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_notifications_audience" ON "notifications"."notifications" USING btree ("tenant_id","audience_role","id") WHERE audience_role IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_notifications_booking" ON "notifications"."notifications" USING btree ("booking_id");--> statement-breakpoint
CREATE INDEX "ix_notifications_created_at" ON "notifications"."notifications" USING btree ("created_at");