import cron, { type ScheduledTask } from 'node-cron';
import type { Kafka } from 'kafkajs';
import type { Database } from '../db';
import type { PlatformEnv } from '../env';
import type { Logger } from '../logger';
import { counter, registeredLabel } from '../metrics';
import { isJobPaused, runJobCycle, type JobRunResult } from './run-log';
import { type JobDefinition, type JobTrigger } from './types';

const ticksSkipped = counter('pin_job_ticks_skipped_total', 'Scheduler ticks skipped because the previous cycle was still running, or the job is paused', ['job', 'reason'], {
  job: registeredLabel('job'),
  reason: ['overlap', 'paused', 'stopping'],
});

export interface ScheduledJob {
  job: JobDefinition;
  task: ScheduledTask;
  nextRun(): Date | null;
  /** runs one cycle now unless one is in progress in this process (same safety rules as the tick) */
  runNow(trigger?: JobTrigger): Promise<JobRunResult | null>;
  /** what a schedule tick does: one cycle unless the job is paused (ops.job_controls) or one is in progress */
  runScheduled(): Promise<JobRunResult | null>;
  /**
   * A wake-up (the relay's NOTIFY): a scheduled cycle now, or — when one is in progress — one more right
   * after it, so that the rows that woke it are read by a cycle that starts after they committed. Wake-ups
   * during a wait are coalesced into that one cycle. Resolves when the cycles it caused have ended.
   */
  wake(): Promise<void>;
}

/** What the scheduler is doing at this instant (worker /health). */
export interface SchedulerActivity {
  /** ticks (or wake-ups) between their pause check and the end of their cycle */
  ticksInProgress: number;
  /** jobs with a cycle running in this process */
  running: string[];
}

/**
 * node-cron schedules, one per job. No overlap inside a process: a tick that arrives while the
 * previous cycle runs is skipped and counted. Across instances the jobs rely on PostgreSQL
 * (SKIP LOCKED rows, advisory locks), never on this in-memory flag.
 */
export class JobScheduler {
  private readonly scheduled = new Map<string, ScheduledJob>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly abort = new AbortController();
  private ticksInProgress = 0;
  private readonly running = new Set<string>();

  constructor(private readonly deps: { database: Database; env: PlatformEnv; logger: Logger; kafka: Kafka }) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  register(job: JobDefinition): ScheduledJob {
    const { cron: expr, timezone } = job.schedule(this.deps.env);
    if (!cron.validate(expr)) throw new Error(`invalid cron expression for ${job.name}: "${expr}"`);
    let running = false;
    let cycleEnded: Promise<unknown> = Promise.resolve(); // the cycle in progress, whichever trigger started it
    const runNow = async (trigger: JobTrigger = 'manual'): Promise<JobRunResult | null> => {
      if (running || this.abort.signal.aborted) {
        ticksSkipped.inc({ job: job.name, reason: running ? 'overlap' : 'stopping' });
        return null;
      }
      running = true;
      this.running.add(job.name);
      const p = runJobCycle(job, { ...this.deps, signal: this.abort.signal }, trigger);
      cycleEnded = p.catch(() => {});
      this.inFlight.add(p);
      try {
        return await p;
      } finally {
        this.inFlight.delete(p);
        this.running.delete(job.name);
        running = false;
      }
    };
    // Counted from before the pause check to the end of the cycle: once the count is 0 after a pause
    // committed, every later tick reads the pause (a new statement sees the commit) and runs nothing.
    const runScheduled = async (): Promise<JobRunResult | null> => {
      this.ticksInProgress += 1;
      try {
        if (await isJobPaused(this.deps.database.db, job.name).catch(() => false)) {
          ticksSkipped.inc({ job: job.name, reason: 'paused' });
          return null;
        }
        return await runNow('schedule');
      } finally {
        this.ticksInProgress -= 1;
      }
    };
    // A wake-up that finds a cycle in progress runs one more cycle after it, unlike an overlapping tick: that
    // cycle may have read the outbox before the waking rows committed, and they would wait for the next tick.
    let waking: Promise<void> | null = null;
    let wokenAgain = false;
    const wake = (): Promise<void> => {
      if (waking) {
        wokenAgain = true;
        return waking;
      }
      waking = (async () => {
        do {
          await cycleEnded;
          wokenAgain = false; // the wake-ups so far are covered by the cycle that starts now
          const result = await runScheduled();
          // skipped because another trigger's cycle started between the wait and the call: wait for it, then run
          if (result === null && running) wokenAgain = true;
        } while (wokenAgain && !this.abort.signal.aborted);
      })().finally(() => { waking = null; });
      return waking;
    };
    const task = cron.createTask(expr, async () => { await runScheduled(); }, { timezone, name: job.name, noOverlap: false });
    const entry: ScheduledJob = { job, task, nextRun: () => task.getNextRun(), runNow, runScheduled, wake };
    this.scheduled.set(job.name, entry);
    return entry;
  }

  start(): void {
    for (const { task } of this.scheduled.values()) void task.start();
  }

  activity(): SchedulerActivity {
    return { ticksInProgress: this.ticksInProgress, running: [...this.running] };
  }

  get(name: string): ScheduledJob | undefined {
    return this.scheduled.get(name);
  }

  list(): ScheduledJob[] {
    return [...this.scheduled.values()];
  }

  /** Stops the ticks, signals the cycles in hand (they finish or roll back their batch), waits for them. */
  async stop(): Promise<void> {
    for (const { task } of this.scheduled.values()) await task.stop();
    this.abort.abort();
    await Promise.allSettled([...this.inFlight]);
    for (const { job } of this.scheduled.values()) await job.close?.().catch(() => {});
  }
}
