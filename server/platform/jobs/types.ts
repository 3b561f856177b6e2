import type { Database } from '../db';
import type { PlatformEnv } from '../env';
import type { Kafka } from 'kafkajs';
import type { Logger } from '../logger';

/** A job's fixed name (DESIGN.md); the composition root (server/main/jobs.ts) lists them. */
export type JobName = string;

export type JobTrigger = 'schedule' | 'manual' | 'cli';

/**
 * A job's context. `E` is the settings the job reads: platform's and its context's slice. Platform runs
 * every job with the process's environment, which the composition root (server/main/env.ts) parses with
 * every slice, so a job's own settings are always there.
 */
export interface JobContext<E extends PlatformEnv = PlatformEnv> {
  database: Database;
  env: E;
  logger: Logger;
  /** correlationId of the cycle */
  runId: string;
  /** aborted when the worker is asked to stop: jobs check it before each batch */
  signal: AbortSignal;
  trigger: JobTrigger;
  /** a kafkajs client (no connection until used) for jobs that publish */
  kafka: Kafka;
}

export type JobSummary = Record<string, unknown>;

export interface JobDefinition<E extends PlatformEnv = PlatformEnv> {
  name: JobName;
  /** node-cron expression (6 fields, seconds first) and its time zone */
  schedule(env: E): { cron: string; timezone: string };
  /** one cycle; returns the summary counters named by the spec */
  run(ctx: JobContext<E>): Promise<JobSummary>;
  /**
   * A run that did nothing worth a history row (e.g. an idle relay tick every few seconds) may say so;
   * failures are always recorded.
   */
  isIdle?(summary: JobSummary): boolean;
  /** releases what the job holds between cycles (producer, advisory-lock connection) */
  close?(): Promise<void>;
}

/** A run skipped because another instance holds the job's lock returns `{ skippedLocked: true }`. */

export const SKIPPED_LOCKED = 'skippedLocked';
