import type postgres from 'postgres';
import { connectPostgres } from '../platform/db';
import type { PlatformEnv } from '../platform/env';
import type { JobContext, JobDefinition } from '../platform/jobs/types';
import type { CatalogEnv } from './env';
import { retentionCutoff, validateRetentionSettings, type RetentionSettings } from './card';
import {
  hasRemovableCards, purgeRemovableBatch, RETENTION_PHASES, type PurgedBatch, type RetentionPhase,
} from './delisted-card-purge';
import { getDelistedBacklog, serverNow } from './queries';
import { retentionMetrics, setBacklog } from './retention-metrics';

type CatalogJobEnv = PlatformEnv & CatalogEnv;

/**
 * Job `delisted-retention` (spec catalog-delisted-retention-job): physically removes catalog cards that
 * have been Delisted for longer than RetentionPeriod, in batches, property object cards (phase A)
 * before project cards (phase B), with their display overrides. Each batch is one transaction, so a
 * failure keeps the committed batches and the next run resumes from the data (no checkpoint).
 * Publishes no event: favorites/selections keep the id and get NOT_FOUND on their next read.
 */

export const DELISTED_RETENTION_LOCK_KEY = 'job:scheduled:catalog-delisted-retention';

export type RetentionStopReason = 'MaxBatchesPerRun' | 'MaxRunDuration' | 'StopRequested';

export type DelistedRetentionSummary = {
  DeletedPropertyObjectCards: number;
  DeletedProjectCards: number;
  DeletedOverrides: number;
  BatchesProcessed: number;
  /** the run ended at a limit (or a stop request) with removable cards left */
  HasMore: boolean;
  DurationMs: number;
  Cutoff: string | null;
  StoppedBy: RetentionStopReason | 'Completed' | 'Failed' | null;
  skippedLocked?: true;
};

export interface DelistedRetentionOptions {
  /** overrides of the env settings (DELISTED_RETENTION_*); validated like them */
  settings?: Partial<RetentionSettings>;
  /** the run's clock for the cutoff and MaxRunDuration; default: PostgreSQL now() for the cutoff, Date.now for the duration */
  clock?: () => Date;
  /** called inside a batch's transaction once its cards are locked and deleted, before the commit (a throw rolls the batch back) */
  onBatchLocked?: (batch: { phase: RetentionPhase; batchIndex: number; ids: string[] }) => Promise<void> | void;
}

/** A run that failed part-way: the committed batches are final; `summary` says what they removed. */
export class DelistedRetentionRunFailed extends Error {
  constructor(message: string, public readonly summary: DelistedRetentionSummary, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DelistedRetentionRunFailed';
  }
}

export function retentionSettingsFromEnv(env: CatalogEnv): RetentionSettings {
  return {
    retentionPeriodMs: env.DELISTED_RETENTION_PERIOD_MS,
    batchSize: env.DELISTED_RETENTION_BATCH_SIZE,
    maxBatchesPerRun: env.DELISTED_RETENTION_MAX_BATCHES_PER_RUN,
    maxRunDurationMs: env.DELISTED_RETENTION_MAX_RUN_DURATION_MS,
  };
}

const emptySummary = (): DelistedRetentionSummary => ({
  DeletedPropertyObjectCards: 0,
  DeletedProjectCards: 0,
  DeletedOverrides: 0,
  BatchesProcessed: 0,
  HasMore: false,
  DurationMs: 0,
  Cutoff: null,
  StoppedBy: null,
});

/**
 * The distributed lock: a session advisory lock on a single-connection client of the run's own, so it
 * is held exactly as long as this run (and dies with the connection if the instance dies). Not a
 * reserved pool connection: postgres.js 3.4.x crashes the process (uncaught TypeError from a
 * setImmediate) when the unlock is written to a reserved connection whose backend died, e.g. when
 * PostgreSQL restarts during a run (porsager/postgres#1208); a client of its own reconnects instead.
 */
async function tryRetentionLock(url: string): Promise<postgres.Sql | null> {
  const conn = connectPostgres(url, { max: 1, applicationName: 'pin-delisted-retention-lock' });
  try {
    const [{ locked }] = await conn<{ locked: boolean }[]>`SELECT pg_try_advisory_lock(hashtext(${DELISTED_RETENTION_LOCK_KEY})) AS locked`;
    if (locked) return conn;
  } catch (e) {
    await conn.end({ timeout: 1 }).catch(() => {});
    throw e;
  }
  await conn.end({ timeout: 1 }).catch(() => {});
  return null;
}

async function releaseRetentionLock(conn: postgres.Sql): Promise<void> {
  try {
    await conn`SELECT pg_advisory_unlock(hashtext(${DELISTED_RETENTION_LOCK_KEY}))`;
  } finally {
    await conn.end({ timeout: 1 }).catch(() => {});
  }
}

async function runDelistedRetention(ctx: JobContext<CatalogJobEnv>, opts: DelistedRetentionOptions): Promise<DelistedRetentionSummary> {
  // invalid settings → ValidationError naming the field, before the lock is taken or anything is read
  const settings = validateRetentionSettings({ ...retentionSettingsFromEnv(ctx.env), ...opts.settings });
  const log = ctx.logger;
  const { db } = ctx.database;
  const summary = emptySummary();

  const lock = await tryRetentionLock(ctx.env.DATABASE_URL);
  if (!lock) {
    retentionMetrics.lockContention.inc();
    log.warn({ event: 'catalog.delisted_retention.skipped_locked', RunId: ctx.runId, lockKey: DELISTED_RETENTION_LOCK_KEY },
      'delisted retention skipped: another instance holds the lock');
    return { ...summary, skippedLocked: true };
  }

  const startedAt = performance.now();
  const elapsedMs = (() => {
    if (!opts.clock) {
      const t0 = Date.now();
      return () => Date.now() - t0;
    }
    const t0 = opts.clock().getTime();
    return () => opts.clock!().getTime() - t0;
  })();
  const endTimer = retentionMetrics.runDuration.startTimer();
  let phase: RetentionPhase = RETENTION_PHASES[0];
  try {
    const cutoff = retentionCutoff(opts.clock ? opts.clock() : await serverNow(db), settings.retentionPeriodMs);
    summary.Cutoff = cutoff.toISOString();
    log.info({ event: 'catalog.delisted_retention.started', RunId: ctx.runId, cutoff: summary.Cutoff, BatchSize: settings.batchSize,
      MaxBatchesPerRun: settings.maxBatchesPerRun, MaxRunDurationMs: settings.maxRunDurationMs }, 'delisted retention started');

    // checked before each batch: the batch in hand always commits or rolls back whole
    const stopReason = (): RetentionStopReason | null => {
      if (ctx.signal.aborted) return 'StopRequested';
      if (summary.BatchesProcessed >= settings.maxBatchesPerRun) return 'MaxBatchesPerRun';
      if (elapsedMs() >= settings.maxRunDurationMs) return 'MaxRunDuration';
      return null;
    };

    let stoppedBy: RetentionStopReason | null = null;
    phases: for (phase of RETENTION_PHASES) {
      for (;;) {
        stoppedBy = stopReason();
        if (stoppedBy) break phases;
        const batchIndex = summary.BatchesProcessed + 1;
        let batchIds: string[] = [];
        let deleted: PurgedBatch | null;
        try {
          deleted = await db.transaction(async (tx) => {
            // the ids are known before anything is deleted, so a batch that fails at any step is named in the log
            const batch = await purgeRemovableBatch(tx, { phase, cutoff, limit: settings.batchSize }, (ids) => { batchIds = ids; });
            if (batch.ids.length === 0) return null;
            await opts.onBatchLocked?.({ phase, batchIndex, ids: batch.ids });
            return batch;
          });
        } catch (e) {
          // the failed batch rolled back whole: its cards are still there for the next run
          summary.HasMore = true;
          summary.StoppedBy = 'Failed';
          log.error({ event: 'catalog.delisted_retention.batch_failed', RunId: ctx.runId, phase, batchIndex, batchIds,
            err: { message: (e as Error).message } }, 'delisted retention batch failed and was rolled back');
          throw new DelistedRetentionRunFailed(`delisted retention failed on batch ${batchIndex} (${phase}): ${(e as Error).message}`, summary, { cause: e });
        }
        if (!deleted) break; // an empty batch ends the phase

        if (phase === 'property_object') {
          summary.DeletedPropertyObjectCards += deleted.ids.length;
          retentionMetrics.deletedPropertyObjectCards.inc(deleted.ids.length);
        } else {
          summary.DeletedProjectCards += deleted.ids.length;
          retentionMetrics.deletedProjectCards.inc(deleted.ids.length);
        }
        summary.DeletedOverrides += deleted.deletedOverrides;
        summary.BatchesProcessed += 1;
        retentionMetrics.deletedOverrides.inc(deleted.deletedOverrides);
        retentionMetrics.batchesProcessed.inc();
        log.debug({ event: 'catalog.delisted_retention.batch', RunId: ctx.runId, phase, batchIndex,
          deletedCards: deleted.ids.length, deletedOverrides: deleted.deletedOverrides,
          DeletedPropertyObjectCards: summary.DeletedPropertyObjectCards, DeletedProjectCards: summary.DeletedProjectCards,
          DeletedOverrides: summary.DeletedOverrides, BatchesProcessed: summary.BatchesProcessed }, 'delisted retention batch committed');
      }
    }

    summary.HasMore = stoppedBy !== null && (await hasRemovableCards(db, cutoff));
    summary.StoppedBy = stoppedBy ?? 'Completed';
    setBacklog(await getDelistedBacklog(db, { cutoff }));
    summary.DurationMs = Math.round(performance.now() - startedAt);
    log.info({ event: 'catalog.delisted_retention.completed', RunId: ctx.runId, ...summary }, 'delisted retention completed');
    return summary;
  } catch (e) {
    summary.DurationMs = Math.round(performance.now() - startedAt);
    summary.StoppedBy = 'Failed';
    if (e instanceof DelistedRetentionRunFailed) throw e;
    throw new DelistedRetentionRunFailed(`delisted retention failed (${phase}): ${(e as Error).message}`, summary, { cause: e });
  } finally {
    endTimer();
    await releaseRetentionLock(lock).catch((e) =>
      log.warn({ RunId: ctx.runId, err: { message: (e as Error).message } }, 'could not release the retention lock; it ends with its connection'));
  }
}

/** The job with injectable settings, clock and batch hook (tests); production uses `delistedRetentionJob`. */
export function createDelistedRetentionJob(opts: DelistedRetentionOptions = {}): JobDefinition<CatalogJobEnv> {
  return {
    name: 'delisted-retention',
    schedule: (env) => ({ cron: env.DELISTED_RETENTION_SCHEDULE, timezone: env.DELISTED_RETENTION_TIMEZONE }),
    run: (ctx) => runDelistedRetention(ctx, opts),
  };
}

export const delistedRetentionJob: JobDefinition<CatalogJobEnv> = createDelistedRetentionJob();
