import cron from 'node-cron';
import type { PlatformEnv } from '../../platform/env';
import type { JobName } from '../../platform/jobs/types';
import type { DbOrTx } from '../../platform/db';
import { registeredJobNames, registeredJobs } from '../../platform/registry';
import { jobControls, lastJobRuns, type JobControlRow, type JobRunRow } from './job-queries';

/**
 * What the Jobs page shows per job: its schedule and time zone (from the job's own
 * JobDefinition.schedule(env), the one the worker registers), the next fire time, pause state and last run.
 */

export interface JobSchedule {
  name: JobName;
  cron: string;
  timezone: string;
  nextRunAt: Date | null;
}

/** Next fire time of a node-cron expression in its time zone (the scheduler's own arithmetic). */
export function nextFireTime(expr: string, timezone: string): Date | null {
  if (!cron.validate(expr)) return null;
  const task = cron.createTask(expr, () => {}, { timezone });
  try {
    return task.getNextRuns(1)[0] ?? null;
  } finally {
    void task.destroy();
  }
}

export function jobSchedules(env: PlatformEnv): JobSchedule[] {
  const jobs = registeredJobs();
  return registeredJobNames().map((name) => {
    const { cron: expr, timezone } = jobs[name].schedule(env);
    return { name, cron: expr, timezone, nextRunAt: nextFireTime(expr, timezone) };
  });
}

export interface JobOverviewRow extends JobSchedule {
  control: JobControlRow | null;
  paused: boolean;
  lastRun: JobRunRow | null;
  lastSucceededAt: Date | null;
}

export async function listJobs(db: DbOrTx, env: PlatformEnv): Promise<JobOverviewRow[]> {
  const [runs, controls] = await Promise.all([lastJobRuns(db), jobControls(db)]);
  return jobSchedules(env).map((s) => ({
    ...s,
    control: controls.get(s.name) ?? null,
    paused: controls.get(s.name)?.paused ?? false,
    lastRun: runs.get(s.name)?.last ?? null,
    lastSucceededAt: runs.get(s.name)?.lastSucceededAt ?? null,
  }));
}
