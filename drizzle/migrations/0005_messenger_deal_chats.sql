CREATE SCHEMA "messenger";
--> statement-breakpoint
CREATE TABLE "messenger"."deal_chats" (
	"deal_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"agent_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_message_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "messenger"."messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"deal_id" uuid NOT NULL,
	"booking_id" uuid,
	"kind" text NOT NULL,
	"card_type" text,
	"card" jsonb,
	"source_message_id" uuid,
	"card_key" text,
	"author_id" uuid,
	"author_role" text,
	"text" text,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "messages_source_message_id_unique" UNIQUE("source_message_id"),
	CONSTRAINT "messages_card_key_unique" UNIQUE("card_key"),
	CONSTRAINT "ck_messages_kind" CHECK ("messenger"."messages"."kind" IN ('card', 'message')),
	CONSTRAINT "ck_messages_shape" CHECK (("messenger"."messages"."kind" = 'card' AND "messenger"."messages"."card_type" IS NOT NULL AND "messenger"."messages"."source_message_id" IS NOT NULL AND "messenger"."messages"."card_key" IS NOT NULL)
    OR ("messenger"."messages"."kind" = 'message' AND "messenger"."messages"."author_id" IS NOT NULL AND "messenger"."messages"."text" IS NOT NULL AND char_length("messenger"."messages"."text") BETWEEN 1 AND 2000))
);
--> statement-breakpoint
CREATE TABLE "messenger"."inbox" (
	"consumer" text NOT NULL,
	"message_id" uuid NOT NULL,
	"topic" text DEFAULT '' NOT NULL,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"result" text NOT NULL,
	"detail" text,
	CONSTRAINT "messenger_inbox_pk" PRIMARY KEY("consumer","message_id"),
	CONSTRAINT "ck_messenger_inbox_result" CHECK ("messenger"."inbox"."result" IN ('applied', 'no-op', 'rejected'))
);
--> statement-breakpoint
CREATE INDEX "ix_deal_chats_tenant" ON "messenger"."deal_chats" USING btree ("tenant_id","last_message_at");--> statement-breakpoint
CREATE INDEX "ix_messages_deal" ON "messenger"."messages" USING btree ("deal_id","id");