import { sql } from 'drizzle-orm';
import { bigserial, boolean, check, index, jsonb, pgSchema, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * The job runner's two tables. They live in the `ops` schema (DESIGN.md fixes the names) but belong to
 * the runner: platform may not import the ops context, so they are defined here and server/ops/schema.ts
 * re-exports them (drizzle-kit reads them from there, through server/main/schema.ts).
 */
const ops = pgSchema('ops');

export const JOB_RUN_STATUSES = ['running', 'succeeded', 'failed', 'skipped'] as const;

/** One row per job cycle (DESIGN decision 6): the dashboard's run history. */
export const jobRuns = ops.table('job_runs', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  job: text('job').notNull(),
  runId: uuid('run_id').notNull().unique(),
  trigger: text('trigger').notNull().default('schedule'),
  instance: text('instance'),
  startedAt: timestamp('started_at', { withTimezone: true, precision: 3 }).notNull(),
  finishedAt: timestamp('finished_at', { withTimezone: true, precision: 3 }),
  status: text('status', { enum: JOB_RUN_STATUSES }).notNull(),
  summary: jsonb('summary'),
  error: text('error'),
}, (t) => [
  check('ck_job_runs_status', sql`${t.status} IN ('running', 'succeeded', 'failed', 'skipped')`),
  index('ix_job_runs_job_started').on(t.job, t.startedAt),
]);

/** Pause/resume and "run now" requests, obeyed by every worker instance. */
export const jobControls = ops.table('job_controls', {
  job: text('job').primaryKey(),
  paused: boolean('paused').notNull().default(false),
  changedBy: text('changed_by'),
  changedAt: timestamp('changed_at', { withTimezone: true, precision: 3 }),
  /** why the job was paused / resumed (also in ops.audit_log) */
  reason: text('reason'),
});

