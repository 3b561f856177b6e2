import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { and, eq, lt, sql } from 'drizzle-orm';
import { jobControls, jobRuns } from './schema';
import type { Db, DbOrTx } from '../db';
import type { JobContext, JobDefinition, JobSummary, JobTrigger } from './types';
import { SKIPPED_LOCKED } from './types';
import { counter, gauge, histogram, registeredLabel } from '../metrics';
import { markSpanFailed, withSpan } from '../tracing';

const instance = `${os.hostname()}:${process.pid}`;

const jobRunsTotal = counter('pin_job_runs_total', 'Job cycles by job and final status', ['job', 'status'], {
  job: registeredLabel('job'),
  status: ['succeeded', 'skipped', 'failed'],
});
const lastSuccess = gauge('pin_job_last_success_timestamp_seconds', 'Unix time of the last successful cycle by job (alert: delisted-retention not run > 26 h)', ['job']);
const jobDuration = histogram('pin_job_run_duration_seconds', 'Job cycle duration by job', ['job'], [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 300, 1200]);

export interface JobRunResult {
  runId: string;
  status: 'succeeded' | 'failed' | 'skipped';
  summary: JobSummary;
  error?: string;
}

export async function isJobPaused(db: Db, job: string): Promise<boolean> {
  const rows = await db.select({ paused: jobControls.paused }).from(jobControls).where(eq(jobControls.job, job));
  return rows[0]?.paused ?? false;
}

/** Pause or resume a job for every worker instance (their schedulers read it on each tick, isJobPaused). */
export async function setJobControl(
  db: DbOrTx,
  input: { job: string; paused: boolean; changedBy: string; changedAt: Date; reason: string | null },
): Promise<void> {
  const { job, ...control } = input;
  await db.insert(jobControls).values({ job, ...control }).onConflictDoUpdate({ target: jobControls.job, set: control });
}

/**
 * Runs one cycle of a job and records it in ops.job_runs (DESIGN decision 6). A failed cycle is
 * recorded with its error and re-thrown only to the caller that asked (`rethrow`).
 */
export async function runJobCycle(
  job: JobDefinition,
  deps: Omit<JobContext, 'runId' | 'trigger'>,
  trigger: JobTrigger,
): Promise<JobRunResult> {
  const runId = randomUUID();
  // the cycle's span: the outbox rows it writes carry it (traceparent), so the consumers' spans join
  // this trace; correlationId = runId (specs: "correlationId = id прогона")
  return withSpan(`job ${job.name}`, {
    attributes: { 'pin.job': job.name, 'pin.run_id': runId, 'pin.correlation_id': runId, 'pin.job.trigger': trigger },
  }, async (span) => {
    const result = await runRecordedCycle(job, deps, trigger, runId);
    span.setAttribute('pin.job.status', result.status);
    if (result.status === 'failed') markSpanFailed(span, result.error ?? 'failed');
    return result;
  });
}

async function runRecordedCycle(
  job: JobDefinition,
  deps: Omit<JobContext, 'runId' | 'trigger'>,
  trigger: JobTrigger,
  runId: string,
): Promise<JobRunResult> {
  const startedAt = new Date();
  const { db } = deps.database;
  // correlationId = runId: one field joins the cycle's lines with the consumers' lines of its events
  const logger = deps.logger.child({ job: job.name, runId, correlationId: runId });
  const ctx: JobContext = { ...deps, logger, runId, trigger };
  const endTimer = jobDuration.startTimer({ job: job.name });
  try {
    const summary = await job.run(ctx);
    const skipped = summary[SKIPPED_LOCKED] === true;
    const status = skipped ? 'skipped' : 'succeeded';
    jobRunsTotal.inc({ job: job.name, status });
    if (status === 'succeeded') lastSuccess.set({ job: job.name }, Date.now() / 1000);
    if (!(job.isIdle?.(summary) ?? false)) {
      await db.insert(jobRuns).values({
        job: job.name, runId, trigger, instance, startedAt, finishedAt: new Date(), status, summary,
      });
    }
    return { runId, status, summary };
  } catch (e) {
    const error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    jobRunsTotal.inc({ job: job.name, status: 'failed' });
    logger.error({ err: { message: error } }, 'job cycle failed');
    const summary = (e as { summary?: JobSummary })?.summary ?? {};
    await db
      .insert(jobRuns)
      .values({ job: job.name, runId, trigger, instance, startedAt, finishedAt: new Date(), status: 'failed', summary, error })
      .catch((logErr) => logger.error({ err: { message: String(logErr) } }, 'could not record failed job run'));
    return { runId, status: 'failed', summary, error };
  } finally {
    endTimer();
  }
}

/** Run history is kept for a configurable period (JOB_RUNS_RETENTION_MS) and pruned. */
export async function pruneJobRuns(db: Db, retentionMs: number): Promise<number> {
  const cutoff = new Date(Date.now() - retentionMs);
  const res = await db.delete(jobRuns).where(and(lt(jobRuns.startedAt, cutoff), sql`status <> 'running'`)).returning({ id: jobRuns.id });
  return res.length;
}
