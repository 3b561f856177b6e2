CREATE TABLE "catalog"."pending_status_changes" (
	"property_object_id" uuid PRIMARY KEY NOT NULL,
	"to_status" text NOT NULL,
	"source_version" integer NOT NULL,
	"status_changed_at" timestamp (3) with time zone NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
