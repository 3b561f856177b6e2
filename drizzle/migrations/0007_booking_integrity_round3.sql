ALTER TABLE "crm"."booking_programs" ADD COLUMN "max_extensions" integer DEFAULT 2 NOT NULL;
--> statement-breakpoint
ALTER TABLE "crm"."booking_programs" ADD CONSTRAINT "ck_booking_programs_max_extensions" CHECK ("crm"."booking_programs"."max_extensions" >= 0);
--> statement-breakpoint
ALTER TABLE "crm"."bookings" ADD COLUMN "extension_count" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "chessboard"."crm_booking_versions" ADD COLUMN "booking_created_at" timestamp (3) with time zone;
