CREATE SCHEMA "crm";
--> statement-breakpoint
CREATE SCHEMA "chessboard";
--> statement-breakpoint
CREATE SCHEMA "catalog";
--> statement-breakpoint
CREATE SCHEMA "auth";
--> statement-breakpoint
CREATE SCHEMA "ops";
--> statement-breakpoint
CREATE TABLE "crm"."booking_programs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"is_paid" boolean DEFAULT false NOT NULL,
	"reserve_duration_minutes" integer DEFAULT 60 NOT NULL,
	"booking_duration_hours" integer DEFAULT 48 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ck_booking_programs_durations" CHECK ("crm"."booking_programs"."reserve_duration_minutes" > 0 AND "crm"."booking_programs"."booking_duration_hours" > 0)
);
--> statement-breakpoint
CREATE TABLE "crm"."booking_timeline" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"booking_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"actor_type" text NOT NULL,
	"actor_id" text NOT NULL,
	"action" text NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reason" text,
	"correlation_id" uuid,
	"message_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"booking_version" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "crm"."bookings" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"deal_id" uuid NOT NULL,
	"property_object_id" uuid NOT NULL,
	"program_id" uuid NOT NULL,
	"status" text NOT NULL,
	"reserve_expires_at" timestamp (3) with time zone NOT NULL,
	"booking_expires_at" timestamp (3) with time zone,
	"booked_at" timestamp (3) with time zone,
	"payment_status" text NOT NULL,
	"contract_document" text,
	"receipt_document" text,
	"created_by" uuid,
	"closed_reason" text,
	"closed_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ck_bookings_status" CHECK ("crm"."bookings"."status" IN ('Reserved', 'AwaitingPayment', 'Booked', 'Completed', 'ReserveExpired', 'BookingExpired', 'Cancelled')),
	CONSTRAINT "ck_bookings_payment_status" CHECK ("crm"."bookings"."payment_status" IN ('NotRequired', 'Pending', 'ContractUploaded', 'ReceiptUploaded', 'Paid')),
	CONSTRAINT "ck_bookings_booked_timer" CHECK ("crm"."bookings"."status" <> 'Booked' OR ("crm"."bookings"."booking_expires_at" IS NOT NULL AND "crm"."bookings"."booked_at" IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "crm"."outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"message_id" uuid NOT NULL,
	"topic" text NOT NULL,
	"key" text NOT NULL,
	"aggregate_type" text NOT NULL,
	"aggregate_id" uuid NOT NULL,
	"payload" jsonb NOT NULL,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"published_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"next_attempt_at" timestamp with time zone,
	CONSTRAINT "outbox_message_id_unique" UNIQUE("message_id")
);
--> statement-breakpoint
CREATE TABLE "crm"."deals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"title" text NOT NULL,
	"agent_id" uuid,
	"status" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ck_deals_status" CHECK ("crm"."deals"."status" IN ('Draft', 'Application', 'Booking', 'Sale', 'Cancelled'))
);
--> statement-breakpoint
CREATE TABLE "crm"."idempotency_keys" (
	"key" text PRIMARY KEY NOT NULL,
	"actor_id" text NOT NULL,
	"command" text NOT NULL,
	"request_hash" text NOT NULL,
	"response" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chessboard"."buildings" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"sections" integer NOT NULL,
	"floors" integer NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chessboard"."inbox" (
	"consumer" text NOT NULL,
	"message_id" uuid NOT NULL,
	"topic" text DEFAULT '' NOT NULL,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"result" text NOT NULL,
	"detail" text,
	CONSTRAINT "chessboard_inbox_pk" PRIMARY KEY("consumer","message_id"),
	CONSTRAINT "ck_chessboard_inbox_result" CHECK ("chessboard"."inbox"."result" IN ('applied', 'no-op', 'rejected'))
);
--> statement-breakpoint
CREATE TABLE "chessboard"."outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"message_id" uuid NOT NULL,
	"topic" text NOT NULL,
	"key" text NOT NULL,
	"aggregate_type" text NOT NULL,
	"aggregate_id" uuid NOT NULL,
	"payload" jsonb NOT NULL,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"published_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"next_attempt_at" timestamp with time zone,
	CONSTRAINT "outbox_message_id_unique" UNIQUE("message_id")
);
--> statement-breakpoint
CREATE TABLE "chessboard"."crm_booking_versions" (
	"booking_id" uuid PRIMARY KEY NOT NULL,
	"property_object_id" uuid NOT NULL,
	"deal_id" uuid NOT NULL,
	"applied_version" integer NOT NULL,
	"released" boolean DEFAULT false NOT NULL,
	"last_event_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chessboard"."hold_mismatches" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"property_object_id" uuid NOT NULL,
	"tenant_id" uuid,
	"booking_id" uuid,
	"message_id" uuid NOT NULL,
	"topic" text NOT NULL,
	"event_deal_id" uuid,
	"hold_deal_id" uuid,
	"object_status" text NOT NULL,
	"detail" text,
	"observed_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "chessboard"."hold_releases" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"property_object_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"hold_deal_id" uuid,
	"from_status" text NOT NULL,
	"expired_timer_at" timestamp (3) with time zone,
	"overdue_by_ms" bigint,
	"status_source" text NOT NULL,
	"run_id" uuid,
	"actor_id" text,
	"reason" text,
	"message_id" uuid NOT NULL,
	"released_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chessboard"."projects" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"city" text NOT NULL,
	"property_objects_free_count" integer DEFAULT 0 NOT NULL,
	"property_objects_total_count" integer DEFAULT 0 NOT NULL,
	"property_objects_held_count" integer DEFAULT 0 NOT NULL,
	"property_objects_sold_count" integer DEFAULT 0 NOT NULL,
	"aggregates_recalc_requested_at" timestamp (3) with time zone,
	"aggregates_recalculated_at" timestamp (3) with time zone,
	"deleted_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chessboard"."property_object_status_history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"property_object_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"from_status" text NOT NULL,
	"to_status" text NOT NULL,
	"status_source" text NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"booking_id" uuid,
	"deal_id" uuid,
	"actor_id" text,
	"reason" text,
	"causation_id" uuid,
	"message_id" uuid,
	"version" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chessboard"."property_objects" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"building_id" uuid NOT NULL,
	"section" integer NOT NULL,
	"floor" integer NOT NULL,
	"number" text NOT NULL,
	"rooms" integer NOT NULL,
	"area" numeric(7, 2) NOT NULL,
	"price" numeric(14, 2) NOT NULL,
	"status" text NOT NULL,
	"reserved_until" timestamp (3) with time zone,
	"booked_until" timestamp (3) with time zone,
	"hold_deal_id" uuid,
	"hold_booking_id" uuid,
	"sold_at" timestamp (3) with time zone,
	"status_source" text NOT NULL,
	"status_changed_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	CONSTRAINT "ck_property_objects_status" CHECK ("chessboard"."property_objects"."status" IN ('Free', 'Reserved', 'Booked', 'Sold', 'Hidden')),
	CONSTRAINT "ck_property_objects_status_source" CHECK ("chessboard"."property_objects"."status_source" IN ('Crm', 'ExpirationJob', 'Manual', 'Import')),
	CONSTRAINT "ck_property_objects_inv_chs_002" CHECK ((("chessboard"."property_objects"."status" = 'Reserved') = ("chessboard"."property_objects"."reserved_until" IS NOT NULL))
        AND (("chessboard"."property_objects"."status" = 'Booked') = ("chessboard"."property_objects"."booked_until" IS NOT NULL))
        AND (("chessboard"."property_objects"."status" IN ('Reserved', 'Booked')) = ("chessboard"."property_objects"."hold_deal_id" IS NOT NULL))),
	CONSTRAINT "ck_property_objects_hold_booking" CHECK ("chessboard"."property_objects"."hold_booking_id" IS NULL OR "chessboard"."property_objects"."status" IN ('Reserved', 'Booked')),
	CONSTRAINT "ck_property_objects_sizes" CHECK ("chessboard"."property_objects"."rooms" >= 0 AND "chessboard"."property_objects"."area" > 0 AND "chessboard"."property_objects"."price" >= 0)
);
--> statement-breakpoint
CREATE TABLE "catalog"."building_display_overrides" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"building_id" uuid NOT NULL,
	"display_name" text,
	"deleted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalog"."inbox" (
	"consumer" text NOT NULL,
	"message_id" uuid NOT NULL,
	"topic" text DEFAULT '' NOT NULL,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"result" text NOT NULL,
	"detail" text,
	CONSTRAINT "catalog_inbox_pk" PRIMARY KEY("consumer","message_id"),
	CONSTRAINT "ck_catalog_inbox_result" CHECK ("catalog"."inbox"."result" IN ('applied', 'no-op', 'rejected'))
);
--> statement-breakpoint
CREATE TABLE "catalog"."developer_ranking_rules" (
	"id" uuid PRIMARY KEY NOT NULL,
	"developer_id" uuid NOT NULL,
	"project_id" uuid,
	"weight" numeric(6, 2) NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalog"."project_cards" (
	"id" uuid PRIMARY KEY NOT NULL,
	"developer_id" uuid NOT NULL,
	"name" text NOT NULL,
	"city" text NOT NULL,
	"status" text NOT NULL,
	"free_count" integer DEFAULT 0 NOT NULL,
	"source_version" integer DEFAULT 0 NOT NULL,
	"source_updated_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ck_project_cards_status" CHECK ("catalog"."project_cards"."status" IN ('Published', 'Hidden', 'Delisted'))
);
--> statement-breakpoint
CREATE TABLE "catalog"."property_object_cards" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"building_id" uuid NOT NULL,
	"developer_id" uuid NOT NULL,
	"number" text NOT NULL,
	"floor" integer NOT NULL,
	"rooms" integer NOT NULL,
	"area" numeric(7, 2) NOT NULL,
	"price" numeric(14, 2) NOT NULL,
	"sale_status" text NOT NULL,
	"status" text NOT NULL,
	"source_version" integer DEFAULT 0 NOT NULL,
	"source_updated_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ck_property_object_cards_status" CHECK ("catalog"."property_object_cards"."status" IN ('Published', 'Hidden', 'Delisted'))
);
--> statement-breakpoint
CREATE TABLE "catalog"."property_object_display_overrides" (
	"id" uuid PRIMARY KEY NOT NULL,
	"property_object_id" uuid NOT NULL,
	"title" text,
	"badge" text,
	"deleted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ops"."audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"actor_id" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"reason" text,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "ops"."dlq_messages" (
	"topic" text NOT NULL,
	"partition" integer NOT NULL,
	"offset" bigint NOT NULL,
	"consumer_group" text NOT NULL,
	"error_code" text,
	"error_message" text,
	"original_topic" text,
	"original_partition" integer,
	"original_offset" text,
	"key" text,
	"value" text,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"message_id" uuid,
	"aggregate_id" text,
	"tenant_id" uuid,
	"failed_at" timestamp (3) with time zone,
	"read_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"decision" text,
	"decided_at" timestamp (3) with time zone,
	"decided_by" text,
	"decision_reason" text,
	CONSTRAINT "ops_dlq_messages_pk" PRIMARY KEY("topic","partition","offset"),
	CONSTRAINT "ck_dlq_messages_decision" CHECK ("ops"."dlq_messages"."decision" IS NULL OR "ops"."dlq_messages"."decision" IN ('requeued', 'discarded'))
);
--> statement-breakpoint
CREATE TABLE "ops"."job_controls" (
	"job" text PRIMARY KEY NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"changed_by" text,
	"changed_at" timestamp (3) with time zone,
	"reason" text
);
--> statement-breakpoint
CREATE TABLE "ops"."job_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job" text NOT NULL,
	"run_id" uuid NOT NULL,
	"trigger" text DEFAULT 'schedule' NOT NULL,
	"instance" text,
	"started_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone,
	"status" text NOT NULL,
	"summary" jsonb,
	"error" text,
	CONSTRAINT "job_runs_run_id_unique" UNIQUE("run_id"),
	CONSTRAINT "ck_job_runs_status" CHECK ("ops"."job_runs"."status" IN ('running', 'succeeded', 'failed', 'skipped'))
);
--> statement-breakpoint
CREATE TABLE "auth"."login_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"email_hash" text NOT NULL,
	"ip" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"success" boolean NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ops"."metric_samples" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"value" double precision NOT NULL,
	"at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "auth"."sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "auth"."tenants" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "auth"."users" (
	"id" uuid PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"display_name" text NOT NULL,
	"password_hash" text NOT NULL,
	"role" text NOT NULL,
	"tenant_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_email_unique" UNIQUE("email"),
	CONSTRAINT "ck_users_role" CHECK ("auth"."users"."role" IN ('agent', 'developer_manager', 'pin_manager', 'ops', 'viewer'))
);
--> statement-breakpoint
ALTER TABLE "crm"."bookings" ADD CONSTRAINT "bookings_deal_id_deals_id_fk" FOREIGN KEY ("deal_id") REFERENCES "crm"."deals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "crm"."bookings" ADD CONSTRAINT "bookings_program_id_booking_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "crm"."booking_programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chessboard"."buildings" ADD CONSTRAINT "buildings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "chessboard"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chessboard"."property_objects" ADD CONSTRAINT "property_objects_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "chessboard"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chessboard"."property_objects" ADD CONSTRAINT "property_objects_building_id_buildings_id_fk" FOREIGN KEY ("building_id") REFERENCES "chessboard"."buildings"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "auth"."sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "auth"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ix_booking_timeline_booking" ON "crm"."booking_timeline" USING btree ("booking_id","at");--> statement-breakpoint
CREATE UNIQUE INDEX "ux_bookings_active_property_object" ON "crm"."bookings" USING btree ("property_object_id") WHERE status IN ('Reserved', 'AwaitingPayment', 'Booked');--> statement-breakpoint
CREATE INDEX "ix_bookings_reserve_expires_at" ON "crm"."bookings" USING btree ("reserve_expires_at") WHERE status IN ('Reserved', 'AwaitingPayment');--> statement-breakpoint
CREATE INDEX "ix_bookings_booking_expires_at" ON "crm"."bookings" USING btree ("booking_expires_at") WHERE status = 'Booked';--> statement-breakpoint
CREATE INDEX "ix_bookings_tenant_status" ON "crm"."bookings" USING btree ("tenant_id","status","created_at");--> statement-breakpoint
CREATE INDEX "ix_bookings_deal" ON "crm"."bookings" USING btree ("deal_id");--> statement-breakpoint
CREATE INDEX "ix_bookings_property_object" ON "crm"."bookings" USING btree ("property_object_id");--> statement-breakpoint
CREATE INDEX "ix_crm_outbox_unpublished" ON "crm"."outbox" USING btree ("id") WHERE published_at IS NULL;--> statement-breakpoint
CREATE INDEX "ix_crm_outbox_published_at" ON "crm"."outbox" USING btree ("published_at") WHERE published_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_deals_tenant" ON "crm"."deals" USING btree ("tenant_id","status");--> statement-breakpoint
CREATE INDEX "ix_buildings_project" ON "chessboard"."buildings" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "ix_chessboard_outbox_unpublished" ON "chessboard"."outbox" USING btree ("id") WHERE published_at IS NULL;--> statement-breakpoint
CREATE INDEX "ix_chessboard_outbox_published_at" ON "chessboard"."outbox" USING btree ("published_at") WHERE published_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_hold_mismatches_observed" ON "chessboard"."hold_mismatches" USING btree ("observed_at");--> statement-breakpoint
CREATE INDEX "ix_hold_releases_released_at" ON "chessboard"."hold_releases" USING btree ("released_at");--> statement-breakpoint
CREATE INDEX "ix_projects_tenant" ON "chessboard"."projects" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "ix_projects_recalc_requested" ON "chessboard"."projects" USING btree ("aggregates_recalc_requested_at") WHERE aggregates_recalc_requested_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_po_status_history_object" ON "chessboard"."property_object_status_history" USING btree ("property_object_id","at");--> statement-breakpoint
CREATE INDEX "ix_property_objects_reserved_until" ON "chessboard"."property_objects" USING btree ("reserved_until") WHERE reserved_until IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_property_objects_booked_until" ON "chessboard"."property_objects" USING btree ("booked_until") WHERE booked_until IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ix_property_objects_building_grid" ON "chessboard"."property_objects" USING btree ("building_id","floor","section");--> statement-breakpoint
CREATE INDEX "ix_property_objects_project_status" ON "chessboard"."property_objects" USING btree ("project_id","status");--> statement-breakpoint
CREATE INDEX "ix_building_display_overrides_project" ON "catalog"."building_display_overrides" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "ix_project_cards_delisted_updated_at" ON "catalog"."project_cards" USING btree ("updated_at") WHERE status = 'Delisted';--> statement-breakpoint
CREATE INDEX "ix_property_object_cards_delisted_updated_at" ON "catalog"."property_object_cards" USING btree ("updated_at") WHERE status = 'Delisted';--> statement-breakpoint
CREATE INDEX "ix_property_object_cards_project" ON "catalog"."property_object_cards" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "ix_po_display_overrides_object" ON "catalog"."property_object_display_overrides" USING btree ("property_object_id");--> statement-breakpoint
CREATE INDEX "ix_audit_log_at" ON "ops"."audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "ix_dlq_messages_undecided" ON "ops"."dlq_messages" USING btree ("consumer_group","failed_at") WHERE decision IS NULL;--> statement-breakpoint
CREATE INDEX "ix_dlq_messages_message" ON "ops"."dlq_messages" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "ix_job_runs_job_started" ON "ops"."job_runs" USING btree ("job","started_at");--> statement-breakpoint
CREATE INDEX "ix_login_attempts_email" ON "auth"."login_attempts" USING btree ("email_hash","at");--> statement-breakpoint
CREATE INDEX "ix_login_attempts_ip" ON "auth"."login_attempts" USING btree ("ip","at");--> statement-breakpoint
CREATE INDEX "ix_metric_samples_name_at" ON "ops"."metric_samples" USING btree ("name","at");--> statement-breakpoint
CREATE INDEX "ix_sessions_user" ON "auth"."sessions" USING btree ("user_id");