ALTER TABLE "auth"."users" DROP CONSTRAINT "ck_users_role";--> statement-breakpoint
ALTER TABLE "auth"."users" ADD CONSTRAINT "ck_users_role" CHECK ("auth"."users"."role" IN ('agent', 'developer_manager', 'pin_manager', 'ops', 'viewer', 'investor'));--> statement-breakpoint
ALTER TABLE "auth"."users" DROP CONSTRAINT "ck_users_tenant_role_has_tenant";--> statement-breakpoint
ALTER TABLE "auth"."users" ADD CONSTRAINT "ck_users_tenant_role_has_tenant" CHECK ("auth"."users"."role" IN ('pin_manager', 'ops', 'investor') OR "auth"."users"."tenant_id" IS NOT NULL);--> statement-breakpoint
ALTER TABLE "crm"."deals" ADD COLUMN "investor_id" uuid;--> statement-breakpoint
CREATE INDEX "ix_deals_investor" ON "crm"."deals" USING btree ("investor_id","updated_at") WHERE investor_id IS NOT NULL;--> statement-breakpoint
ALTER TABLE "crm"."booking_programs" ADD COLUMN "reward_kind" text;--> statement-breakpoint
ALTER TABLE "crm"."booking_programs" ADD COLUMN "reward_value" numeric(14, 2);--> statement-breakpoint
ALTER TABLE "crm"."booking_programs" ADD CONSTRAINT "ck_booking_programs_reward" CHECK (("crm"."booking_programs"."reward_kind" IS NULL AND "crm"."booking_programs"."reward_value" IS NULL) OR ("crm"."booking_programs"."reward_kind" = 'percent' AND "crm"."booking_programs"."reward_value" > 0 AND "crm"."booking_programs"."reward_value" <= 100) OR ("crm"."booking_programs"."reward_kind" = 'fixed' AND "crm"."booking_programs"."reward_value" >= 0));--> statement-breakpoint
ALTER TABLE "crm"."property_objects" ADD COLUMN "price" numeric(14, 2);--> statement-breakpoint
ALTER TABLE "messenger"."deal_chats" ADD COLUMN "investor_id" uuid;--> statement-breakpoint
ALTER TABLE "notifications"."hold_deadlines" ADD COLUMN "investor_id" uuid;--> statement-breakpoint
CREATE SCHEMA "rewards";
--> statement-breakpoint
CREATE TABLE "rewards"."accruals" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"booking_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"deal_id" uuid NOT NULL,
	"property_object_id" uuid NOT NULL,
	"agent_id" uuid,
	"rule_kind" text,
	"rule_value" numeric(14, 2),
	"price" numeric(14, 2),
	"amount" numeric(14, 2) NOT NULL,
	"status" text NOT NULL,
	"message_id" uuid NOT NULL,
	"paid_at" timestamp (3) with time zone NOT NULL,
	"payable_at" timestamp (3) with time zone,
	"voided_at" timestamp (3) with time zone,
	"void_reason" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "accruals_booking_id_unique" UNIQUE("booking_id"),
	CONSTRAINT "accruals_message_id_unique" UNIQUE("message_id"),
	CONSTRAINT "ck_accruals_status" CHECK ("rewards"."accruals"."status" IN ('accrued', 'payable', 'void')),
	CONSTRAINT "ck_accruals_amount" CHECK ("rewards"."accruals"."amount" >= 0)
);
--> statement-breakpoint
CREATE TABLE "rewards"."booking_endings" (
	"booking_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"outcome" text NOT NULL,
	"reason" text,
	"at" timestamp (3) with time zone NOT NULL,
	"message_id" uuid NOT NULL,
	CONSTRAINT "ck_booking_endings_outcome" CHECK ("rewards"."booking_endings"."outcome" IN ('payable', 'void'))
);
--> statement-breakpoint
CREATE TABLE "rewards"."inbox" (
	"consumer" text NOT NULL,
	"message_id" uuid NOT NULL,
	"topic" text DEFAULT '' NOT NULL,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"result" text NOT NULL,
	"detail" text,
	CONSTRAINT "rewards_inbox_pk" PRIMARY KEY("consumer","message_id"),
	CONSTRAINT "ck_rewards_inbox_result" CHECK ("rewards"."inbox"."result" IN ('applied', 'no-op', 'rejected'))
);
--> statement-breakpoint
CREATE INDEX "ix_accruals_agent" ON "rewards"."accruals" USING btree ("agent_id","created_at");--> statement-breakpoint
CREATE INDEX "ix_accruals_tenant" ON "rewards"."accruals" USING btree ("tenant_id","agent_id");
