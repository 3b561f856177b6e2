import { sql } from 'drizzle-orm';
import {
  bigint, bigserial, check, doublePrecision, index, integer, jsonb, pgSchema, primaryKey, smallint, text, timestamp, uuid,
} from 'drizzle-orm/pg-core';

export const ops = pgSchema('ops');

// job_runs and job_controls are the job runner's own record (platform/jobs/run-log.ts writes and obeys
// them): defined there, in this schema, and re-exported for the ops dashboard that reads and sets them
export { JOB_RUN_STATUSES, jobControls, jobRuns } from '../platform/jobs/schema';

// the audit trail is written by every context that audits an action (platform/audit.ts defines it)
export { auditLog } from '../platform/audit';

/**
 * Trend history of the ops dashboard's figures (sparklines): one row per figure and sample, written at
 * most once a minute (by the reconciliation job and by overview reads), pruned after 30 days.
 */
export const metricSamples = ops.table('metric_samples', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  name: text('name').notNull(),
  value: doublePrecision('value').notNull(),
  at: timestamp('at', { withTimezone: true, precision: 3 }).notNull(),
}, (t) => [index('ix_metric_samples_name_at').on(t.name, t.at)]);

export const DLQ_DECISIONS = ['requeued', 'discarded'] as const;

/**
 * The records of the `<group>.dlq` topics as the ops dashboard read them (a cache keyed by the DLQ
 * record's own topic/partition/offset), and the operator's decision on each: requeued to the original
 * topic or discarded. Undecided rows are the ones ops still has to look at.
 */
export const dlqMessages = ops.table('dlq_messages', {
  /** the (prefixed) DLQ topic and the record's position in it */
  topic: text('topic').notNull(),
  partition: integer('partition').notNull(),
  offset: bigint('offset', { mode: 'number' }).notNull(),
  /** the consumer group that rejected it (unprefixed, = inbox consumer name) */
  consumerGroup: text('consumer_group').notNull(),
  errorCode: text('error_code'),
  errorMessage: text('error_message'),
  /** headers dlq.original.*: where the message was consumed from */
  originalTopic: text('original_topic'),
  originalPartition: integer('original_partition'),
  originalOffset: text('original_offset'),
  key: text('key'),
  value: text('value'),
  /** the message's own headers (without dlq.*), replayed on requeue */
  headers: jsonb('headers').$type<Record<string, string>>().notNull().default({}),
  messageId: uuid('message_id'),
  aggregateId: text('aggregate_id'),
  tenantId: uuid('tenant_id'),
  failedAt: timestamp('failed_at', { withTimezone: true, precision: 3 }),
  readAt: timestamp('read_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  decision: text('decision', { enum: DLQ_DECISIONS }),
  decidedAt: timestamp('decided_at', { withTimezone: true, precision: 3 }),
  decidedBy: text('decided_by'),
  decisionReason: text('decision_reason'),
  /** how many times this message reached this group's DLQ: 1 + the attempts of the record it is a retry of */
  attempts: integer('attempts').notNull().default(1),
  /** when the first of those attempts failed */
  firstFailedAt: timestamp('first_failed_at', { withTimezone: true, precision: 3 }),
  /** `topic/partition/offset` of the record whose requeue this record is the failure of: that record is superseded by this one */
  retryOf: text('retry_of'),
}, (t) => [
  primaryKey({ name: 'ops_dlq_messages_pk', columns: [t.topic, t.partition, t.offset] }),
  check('ck_dlq_messages_decision', sql`${t.decision} IS NULL OR ${t.decision} IN ('requeued', 'discarded')`),
  index('ix_dlq_messages_undecided').on(t.consumerGroup, t.failedAt).where(sql`decision IS NULL`),
  index('ix_dlq_messages_message').on(t.messageId),
  index('ix_dlq_messages_retry_of').on(t.retryOf),
]);

export const RECONCILIATION_FINDING_KINDS = ['booking_not_held', 'hold_without_booking', 'timer_mismatch'] as const;

/**
 * The reconciliation's findings (server/ops/reconciliation-findings.ts), kept by its job and by the repairs:
 * the page and the overview read this table instead of comparing every active booking with its object.
 * One row per finding: `subject_id` is the active booking for booking_not_held / timer_mismatch, the held
 * object for hold_without_booking. `pending_since`: one of its rows changed, or a repair was made, after it was
 * found — not listed until a cycle judges it again once that change has settled (deleted when it agrees).
 */
export const reconciliationFindings = ops.table('reconciliation_findings', {
  kind: text('kind', { enum: RECONCILIATION_FINDING_KINDS }).notNull(),
  subjectId: uuid('subject_id').notNull(),
  propertyObjectId: uuid('property_object_id').notNull(),
  bookingId: uuid('booking_id'),
  tenantId: uuid('tenant_id').notNull(),
  /** the page's order within a kind */
  objectNumber: text('object_number'),
  cause: text('cause').notNull(),
  repairs: text('repairs').array().notNull(),
  /** both sides as they were judged (object and booking status, timers, hold owner, names): zod-checked on read */
  details: jsonb('details').$type<Record<string, unknown>>().notNull(),
  /** first found; kept while the finding stays the same kind */
  foundAt: timestamp('found_at', { withTimezone: true, precision: 3 }).notNull(),
  /** the last judgement: a cycle's time, or a repair's */
  checkedAt: timestamp('checked_at', { withTimezone: true, precision: 3 }).notNull(),
  /** the job run or the repair's correlation id that judged it last */
  checkedBy: text('checked_by'),
  pendingSince: timestamp('pending_since', { withTimezone: true, precision: 3 }),
}, (t) => [
  primaryKey({ name: 'ops_reconciliation_findings_pk', columns: [t.kind, t.subjectId] }),
  check('ck_reconciliation_findings_kind', sql`${t.kind} IN ('booking_not_held', 'hold_without_booking', 'timer_mismatch')`),
  index('ix_reconciliation_findings_object').on(t.propertyObjectId),
  index('ix_reconciliation_findings_booking').on(t.bookingId),
  index('ix_reconciliation_findings_tenant').on(t.tenantId),
]);

/**
 * One row (id 1): where the reconciliation's incremental comparison stands. Its cycles and the repairs'
 * re-checks lock it (FOR UPDATE), so two of them never write the findings from different snapshots.
 */
export const reconciliationState = ops.table('reconciliation_state', {
  id: smallint('id').primaryKey(),
  /** the next cycle compares the bookings and objects changed at or after this (minus the overlap); null: compare all */
  watermark: timestamp('watermark', { withTimezone: true, precision: 3 }),
  /** the last cycle's time: the page's "as of" */
  checkedAt: timestamp('checked_at', { withTimezone: true, precision: 3 }),
  /** the last cycle that compared every active booking and held object */
  fullAt: timestamp('full_at', { withTimezone: true, precision: 3 }),
  runId: text('run_id'),
}, () => [check('ck_reconciliation_state_single', sql`id = 1`)]);
