import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db';
import { registeredJobNames } from '../../platform/registry';
import { num, toDate, ts } from './sql';

/** Ops read side: job runs and controls (the job runner's ops.job_runs / ops.job_controls), catalog retention runs. */

/* ---------------------------------------------------------------------------------------------
 * Jobs: history from ops.job_runs (DESIGN decision 6), controls from ops.job_controls.
 * ------------------------------------------------------------------------------------------- */

export interface JobRunRow {
  id: number;
  job: string;
  runId: string;
  trigger: string;
  instance: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  durationMs: number | null;
  status: string;
  summary: Record<string, unknown>;
  error: string | null;
  /** the job's work items of the run (released holds, deleted cards, published rows…) */
  items: number | null;
}

/** The counter that says how much a run of each job did (spec names of the summaries). */
export function itemsOf(job: string, summary: Record<string, unknown> | null | undefined): number | null {
  if (!summary) return null;
  const n = (k: string) => (typeof summary[k] === 'number' ? (summary[k] as number) : 0);
  switch (job) {
    case 'booking-expiration': return n('ReserveExpiredCount') + n('BookingExpiredCount');
    case 'property-object-hold-expiration': return n('ReservedReleasedCount') + n('BookedReleasedCount');
    case 'project-aggregates-recalc': return n('ProjectsRecalculated');
    case 'delisted-retention': return n('DeletedPropertyObjectCards') + n('DeletedProjectCards');
    case 'outbox-relay': return n('Published');
    case 'reconciliation': return n('Total');
    case 'notifications-deadline-soon': return n('NotificationsCreated');
    case 'notifications-retention': return n('DeletedNotifications');
    case 'reports-daily-rollup': return n('DaysRolledUp');
    default: return null;
  }
}

function toRun(r: Record<string, unknown>): JobRunRow {
  const startedAt = toDate(r.started_at)!;
  const finishedAt = toDate(r.finished_at);
  const summary = (typeof r.summary === 'string' ? JSON.parse(r.summary) : r.summary ?? {}) as Record<string, unknown>;
  return {
    id: num(r.id),
    job: String(r.job),
    runId: String(r.run_id),
    trigger: String(r.trigger),
    instance: (r.instance as string | null) ?? null,
    startedAt,
    finishedAt,
    durationMs: finishedAt ? finishedAt.getTime() - startedAt.getTime() : null,
    status: String(r.status),
    summary,
    error: (r.error as string | null) ?? null,
    items: itemsOf(String(r.job), summary),
  };
}

/**
 * The last recorded run of each job, and the last successful one. One index probe per job name
 * (ix_job_runs_job_started read backwards, LIMIT 1) instead of a pass over the whole history: the tab and
 * the overview cost the same at 30 days of runs as at one.
 */
export async function lastJobRuns(db: DbOrTx, jobs: readonly string[] = registeredJobNames()): Promise<Map<string, { last: JobRunRow; lastSucceededAt: Date | null }>> {
  const rows = await db.execute<Record<string, unknown>>(sql`
    SELECT r.id, r.job, r.run_id, r.trigger, r.instance, r.started_at, r.finished_at, r.status, r.summary, r.error,
           (SELECT s.started_at FROM ops.job_runs s WHERE s.job = j.name AND s.status = 'succeeded'
             ORDER BY s.started_at DESC LIMIT 1) AS last_succeeded_at
    FROM unnest(${`{${jobs.join(',')}}`}::text[]) AS j(name)
    CROSS JOIN LATERAL (
      SELECT id, job, run_id, trigger, instance, started_at, finished_at, status, summary, error
      FROM ops.job_runs WHERE job = j.name ORDER BY started_at DESC, id DESC LIMIT 1) r`);
  return new Map(rows.map((r) => [String(r.job), { last: toRun(r), lastSucceededAt: toDate(r.last_succeeded_at) }]));
}

/** When this installation recorded its first job run: the oldest run of any job, one index probe per job. */
export async function firstJobRunAt(db: DbOrTx, jobs: readonly string[] = registeredJobNames()): Promise<Date | null> {
  const [row] = await db.execute<Record<string, unknown>>(sql`
    SELECT min(f.started_at) AS first_at
    FROM unnest(${`{${jobs.join(',')}}`}::text[]) AS j(name)
    CROSS JOIN LATERAL (SELECT started_at FROM ops.job_runs WHERE job = j.name ORDER BY started_at ASC LIMIT 1) f`);
  return toDate(row?.first_at);
}

export const JOB_RUN_STATUSES = ['running', 'succeeded', 'failed', 'skipped'] as const;

export interface JobRunsFilter {
  job: string;
  statuses?: (typeof JOB_RUN_STATUSES)[number][];
  from?: Date;
  to?: Date;
  /** only runs started before this one (paging) */
  beforeId?: number;
  limit?: number;
}

export async function listJobRuns(db: DbOrTx, f: JobRunsFilter): Promise<JobRunRow[]> {
  const where: SQL[] = [sql`job = ${f.job}`];
  if (f.statuses && f.statuses.length > 0) where.push(sql`status IN (${sql.join(f.statuses.map((s) => sql`${s}`), sql`, `)})`);
  if (f.from) where.push(sql`started_at >= ${ts(f.from)}`);
  if (f.to) where.push(sql`started_at <= ${ts(f.to)}`);
  if (f.beforeId) where.push(sql`id < ${f.beforeId}`);
  const rows = await db.execute<Record<string, unknown>>(sql`
    SELECT id, job, run_id, trigger, instance, started_at, finished_at, status, summary, error
    FROM ops.job_runs WHERE ${sql.join(where, sql` AND `)}
    ORDER BY started_at DESC, id DESC LIMIT ${Math.min(f.limit ?? 100, 1000)}`);
  return rows.map(toRun);
}

export interface JobControlRow {
  job: string;
  paused: boolean;
  changedBy: string | null;
  changedByName: string | null;
  changedAt: Date | null;
  reason: string | null;
}

export async function jobControls(db: DbOrTx): Promise<Map<string, JobControlRow>> {
  const rows = await db.execute<Record<string, unknown>>(sql`
    SELECT c.job, c.paused, c.changed_by, u.display_name, c.changed_at, c.reason
    FROM ops.job_controls c LEFT JOIN auth.v_users u ON u.id::text = c.changed_by`);
  return new Map(rows.map((r) => [String(r.job), {
    job: String(r.job), paused: Boolean(r.paused), changedBy: (r.changed_by as string | null) ?? null,
    changedByName: (r.display_name as string | null) ?? null, changedAt: toDate(r.changed_at), reason: (r.reason as string | null) ?? null,
  }]));
}

/* ---------------------------------------------------------------------------------------------
 * Catalog retention runs (summary of ops.job_runs) and lock contention (runs skipped on the lock).
 * ------------------------------------------------------------------------------------------- */

export interface RetentionRun {
  runId: string;
  startedAt: Date;
  durationMs: number | null;
  status: string;
  trigger: string;
  deletedPropertyObjectCards: number;
  deletedProjectCards: number;
  deletedOverrides: number;
  batchesProcessed: number;
  hasMore: boolean;
  error: string | null;
}

export async function listRetentionRuns(db: DbOrTx, input: { limit?: number } = {}): Promise<RetentionRun[]> {
  const runs = await listJobRuns(db, { job: 'delisted-retention', limit: input.limit ?? 30 });
  const n = (s: Record<string, unknown>, k: string) => (typeof s[k] === 'number' ? (s[k] as number) : 0);
  return runs.map((r) => ({
    runId: r.runId,
    startedAt: r.startedAt,
    durationMs: typeof r.summary.DurationMs === 'number' ? (r.summary.DurationMs as number) : r.durationMs,
    status: r.status,
    trigger: r.trigger,
    deletedPropertyObjectCards: n(r.summary, 'DeletedPropertyObjectCards'),
    deletedProjectCards: n(r.summary, 'DeletedProjectCards'),
    deletedOverrides: n(r.summary, 'DeletedOverrides'),
    batchesProcessed: n(r.summary, 'BatchesProcessed'),
    hasMore: r.summary.HasMore === true,
    error: r.error,
  }));
}

/** Retention runs that found the advisory lock taken (status skipped) since `since`. */
export async function retentionLockContention(db: DbOrTx, input: { now: Date; sinceMs: number }): Promise<{ skippedRuns: number; lastSkippedAt: Date | null }> {
  const [r] = await db.execute<{ n: number; last: string | null }>(sql`
    SELECT count(*)::int AS n, max(started_at) AS last FROM ops.job_runs
    WHERE job = 'delisted-retention' AND status = 'skipped' AND started_at > ${ts(new Date(input.now.getTime() - input.sinceMs))}`);
  return { skippedRuns: num(r.n), lastSkippedAt: toDate(r.last) };
}
