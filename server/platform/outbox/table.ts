import { sql } from 'drizzle-orm';
import { bigserial, check, index, integer, jsonb, primaryKey, text, timestamp, uuid, type PgSchema } from 'drizzle-orm/pg-core';

/** Every context's outbox has the same shape (DESIGN.md): one factory keeps them identical. */
export function outboxTable(schema: PgSchema<string>) {
  return schema.table(
    'outbox',
    {
      id: bigserial('id', { mode: 'number' }).primaryKey(),
      messageId: uuid('message_id').notNull().unique(),
      topic: text('topic').notNull(),
      key: text('key').notNull(),
      aggregateType: text('aggregate_type').notNull(),
      aggregateId: uuid('aggregate_id').notNull(),
      payload: jsonb('payload').notNull(),
      headers: jsonb('headers').notNull().default({}),
      createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
      publishedAt: timestamp('published_at', { withTimezone: true }),
      attempts: integer('attempts').notNull().default(0),
      lastError: text('last_error'),
      nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    },
    (t) => [
      // the relay scans only unpublished rows, in id order
      index(`ix_${schema.schemaName}_outbox_unpublished`).on(t.id).where(sql`published_at IS NULL`),
      index(`ix_${schema.schemaName}_outbox_published_at`).on(t.publishedAt).where(sql`published_at IS NOT NULL`),
      // the relay's per-key backoff guard reads the unpublished rows that failed (few, usually none)
      // without walking the whole backlog on every batch
      index(`ix_${schema.schemaName}_outbox_backing_off`).on(t.key, t.id).where(sql`published_at IS NULL AND next_attempt_at IS NOT NULL`),
    ],
  );
}

/** Every consuming context's inbox: the dedup record of applied messages. */
export function inboxTable(schema: PgSchema<string>) {
  return schema.table(
    'inbox',
    {
      consumer: text('consumer').notNull(),
      messageId: uuid('message_id').notNull(),
      topic: text('topic').notNull().default(''),
      processedAt: timestamp('processed_at', { withTimezone: true }).notNull().defaultNow(),
      result: text('result', { enum: ['applied', 'no-op', 'rejected'] }).notNull(),
      detail: text('detail'),
    },
    (t) => [
      primaryKey({ name: `${schema.schemaName}_inbox_pk`, columns: [t.consumer, t.messageId] }),
      check(`ck_${schema.schemaName}_inbox_result`, sql`${t.result} IN ('applied', 'no-op', 'rejected')`),
    ],
  );
}
