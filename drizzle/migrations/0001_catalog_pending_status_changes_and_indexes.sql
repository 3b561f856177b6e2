CREATE TABLE "catalog"."pending_status_changes" (
	"property_object_id" uuid PRIMARY KEY NOT NULL,
	"to_status" text NOT NULL,
	"source_version" integer NOT NULL,
	"status_changed_at" timestamp (3) with time zone NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "chessboard"."ix_property_objects_reserved_until";--> statement-breakpoint
DROP INDEX "chessboard"."ix_property_objects_booked_until";--> statement-breakpoint
CREATE INDEX "ix_crm_outbox_backing_off" ON "crm"."outbox" USING btree ("key","id") WHERE published_at IS NULL AND next_attempt_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_chessboard_outbox_backing_off" ON "chessboard"."outbox" USING btree ("key","id") WHERE published_at IS NULL AND next_attempt_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_property_objects_number" ON "chessboard"."property_objects" USING btree (lower(number));--> statement-breakpoint
CREATE INDEX "ix_property_objects_reserved_until" ON "chessboard"."property_objects" USING btree ("reserved_until","id") WHERE reserved_until IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_property_objects_booked_until" ON "chessboard"."property_objects" USING btree ("booked_until","id") WHERE booked_until IS NOT NULL;