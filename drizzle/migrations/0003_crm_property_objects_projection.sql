CREATE TABLE "crm"."inbox" (
	"consumer" text NOT NULL,
	"message_id" uuid NOT NULL,
	"topic" text DEFAULT '' NOT NULL,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"result" text NOT NULL,
	"detail" text,
	CONSTRAINT "crm_inbox_pk" PRIMARY KEY("consumer","message_id"),
	CONSTRAINT "ck_crm_inbox_result" CHECK ("crm"."inbox"."result" IN ('applied', 'no-op', 'rejected'))
);
--> statement-breakpoint
CREATE TABLE "crm"."property_objects" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"status" text NOT NULL,
	"deleted" boolean DEFAULT false NOT NULL,
	"source_version" integer NOT NULL,
	"source_changed_at" timestamp (3) with time zone NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ck_crm_property_objects_status" CHECK ("crm"."property_objects"."status" IN ('Free', 'Reserved', 'Booked', 'Sold', 'Hidden')),
	CONSTRAINT "ck_crm_property_objects_deleted" CHECK (NOT "crm"."property_objects"."deleted" OR "crm"."property_objects"."deleted_at" IS NOT NULL)
);
