ALTER TABLE "ops"."dlq_messages" ADD COLUMN "attempts" integer DEFAULT 1 NOT NULL;
--> statement-breakpoint
ALTER TABLE "ops"."dlq_messages" ADD COLUMN "first_failed_at" timestamp (3) with time zone;
--> statement-breakpoint
ALTER TABLE "ops"."dlq_messages" ADD COLUMN "retry_of" text;
--> statement-breakpoint
CREATE INDEX "ix_dlq_messages_retry_of" ON "ops"."dlq_messages" USING btree ("retry_of");
