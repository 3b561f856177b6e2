CREATE SCHEMA "profile";
--> statement-breakpoint
CREATE TABLE "profile"."requisite_erasures" (
	"set_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"erased_by" text NOT NULL,
	"reason" text NOT NULL,
	"erased_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "profile"."requisite_reads" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"set_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"tenant_id" uuid NOT NULL,
	"actor_id" text NOT NULL,
	"actor_role" text NOT NULL,
	"booking_id" uuid,
	"correlation_id" uuid,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "profile"."requisite_set_versions" (
	"set_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"ciphertext" text,
	"key_id" text,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "requisite_set_versions_set_id_version_pk" PRIMARY KEY("set_id","version"),
	CONSTRAINT "ck_requisite_set_versions_cipher" CHECK (("profile"."requisite_set_versions"."ciphertext" IS NULL) = ("profile"."requisite_set_versions"."key_id" IS NULL))
);
--> statement-breakpoint
CREATE TABLE "profile"."requisite_sets" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"current_version" integer DEFAULT 1 NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"erased_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "crm"."bookings" ADD COLUMN "requisite_set_id" uuid;--> statement-breakpoint
ALTER TABLE "crm"."bookings" ADD COLUMN "requisite_set_version" integer;--> statement-breakpoint
ALTER TABLE "profile"."requisite_erasures" ADD CONSTRAINT "requisite_erasures_set_id_requisite_sets_id_fk" FOREIGN KEY ("set_id") REFERENCES "profile"."requisite_sets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profile"."requisite_reads" ADD CONSTRAINT "requisite_reads_set_id_requisite_sets_id_fk" FOREIGN KEY ("set_id") REFERENCES "profile"."requisite_sets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profile"."requisite_set_versions" ADD CONSTRAINT "requisite_set_versions_set_id_requisite_sets_id_fk" FOREIGN KEY ("set_id") REFERENCES "profile"."requisite_sets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ix_requisite_reads_set" ON "profile"."requisite_reads" USING btree ("set_id","at");--> statement-breakpoint
CREATE INDEX "ix_requisite_sets_tenant" ON "profile"."requisite_sets" USING btree ("tenant_id","created_at");--> statement-breakpoint
ALTER TABLE "crm"."bookings" ADD CONSTRAINT "ck_bookings_requisite_set" CHECK (("crm"."bookings"."requisite_set_id" IS NULL) = ("crm"."bookings"."requisite_set_version" IS NULL));
