-- The reconciliation's maintained result (server/ops/reconciliation-findings.ts): its findings, read by the
-- reconciliation page and the ops overview, and the watermark of its incremental cycle.
CREATE TABLE "ops"."reconciliation_findings" (
	"kind" text NOT NULL,
	"subject_id" uuid NOT NULL,
	"property_object_id" uuid NOT NULL,
	"booking_id" uuid,
	"tenant_id" uuid NOT NULL,
	"object_number" text,
	"cause" text NOT NULL,
	"repairs" text[] NOT NULL,
	"details" jsonb NOT NULL,
	"found_at" timestamp (3) with time zone NOT NULL,
	"checked_at" timestamp (3) with time zone NOT NULL,
	"checked_by" text,
	"pending_since" timestamp (3) with time zone,
	CONSTRAINT "ops_reconciliation_findings_pk" PRIMARY KEY("kind","subject_id"),
	CONSTRAINT "ck_reconciliation_findings_kind" CHECK ("ops"."reconciliation_findings"."kind" IN ('booking_not_held', 'hold_without_booking', 'timer_mismatch'))
);
--> statement-breakpoint
CREATE TABLE "ops"."reconciliation_state" (
	"id" smallint PRIMARY KEY NOT NULL,
	"watermark" timestamp (3) with time zone,
	"checked_at" timestamp (3) with time zone,
	"full_at" timestamp (3) with time zone,
	"run_id" text,
	CONSTRAINT "ck_reconciliation_state_single" CHECK (id = 1)
);
--> statement-breakpoint
CREATE INDEX "ix_reconciliation_findings_object" ON "ops"."reconciliation_findings" USING btree ("property_object_id");--> statement-breakpoint
CREATE INDEX "ix_reconciliation_findings_booking" ON "ops"."reconciliation_findings" USING btree ("booking_id");--> statement-breakpoint
CREATE INDEX "ix_reconciliation_findings_tenant" ON "ops"."reconciliation_findings" USING btree ("tenant_id");--> statement-breakpoint
-- What the incremental cycle reads: the bookings and objects changed since its watermark, a range scan of the
-- recent changes (a plain CREATE INDEX: writes to these tables wait while it builds).
CREATE INDEX "ix_bookings_updated_at" ON "crm"."bookings" USING btree ("updated_at");--> statement-breakpoint
CREATE INDEX "ix_property_objects_updated_at" ON "chessboard"."property_objects" USING btree ("updated_at");