import { performance } from 'node:perf_hooks';
import type { Tx } from '../platform/db';
import { AppError, pgErrorCode } from '../platform/errors';
import type { JobContext, JobDefinition, JobSummary } from '../platform/jobs/types';
import { persistStatusTransition, requestProjectAggregatesRecalc } from './commands/property-object-persistence';
import {
  holdExpirationBacklog, holdExpirationCycleDuration, holdExpirationErrors, holdExpirationItems, holdExpirationRuns, holdExpirationSkipLocked,
} from './metrics';
import { assertTransitionAllowed, release, type PropertyObjectState } from './property-object';
import {
  countExpiredHolds, countSkippedLocked, PHASES, selectExpiredHoldsForUpdate, type ExpiredHold, type HoldPhase,
} from './property-object-hold-expiration.sql';
import { holdReleases } from './schema';

/**
 * Job `property-object-hold-expiration`: the safety net for lost CRM releases. Every 60 s (UTC) it
 * returns to Free the objects stuck in a hold whose timer expired more than HoldGrace (10 min) ago.
 * The regular release is CRM's (booking-expiration → release topics → crm-property-object-status);
 * each object released here means that release was lost, hence a WARN and a hold_releases row each.
 *
 * One cycle = two phases in order (Reserved, then Booked), each ONE transaction over at most BatchSize
 * rows selected FOR UPDATE SKIP LOCKED (no global lock: parallel instances and the consumer coordinate
 * through row locks). Cross-tenant (a System worker): no tenant filter.
 */

export interface HoldExpirationSummary extends JobSummary {
  AsOf: string;
  ReservedReleasedCount: number;
  BookedReleasedCount: number;
  SkippedLockedCount: number;
  DurationMs: number;
  Errors: number;
  Backlog: number;
  Stopped: boolean;
}

/** The per-object guard; the default is INV-CHS-001 for the ExpirationJob source (tests inject a poison object here). */
export type HoldExpirationGuard = (object: ExpiredHold) => void | Promise<void>;

export const expirationJobGuard: HoldExpirationGuard = (object) => assertTransitionAllowed(object.status, 'Free', 'ExpirationJob');

export interface HoldExpirationJobOptions {
  /** AsOf of a cycle (default: the wall clock at the start of the cycle) */
  now?: () => Date;
  guard?: HoldExpirationGuard;
}

/**
 * Errors that belong to one object (the guard refused, a constraint or data error on its row, its
 * version moved): the object is rolled back to its savepoint and the batch goes on. Anything else
 * (connection lost, deadlock, serialization failure, a bug) is infrastructure: the batch rolls back.
 */
function isItemError(e: unknown): boolean {
  if (e instanceof AppError) return true;
  const code = pgErrorCode(e);
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

const timerOf = (o: ExpiredHold, phase: HoldPhase): Date => (phase === 'reserved' ? o.reservedUntil : o.bookedUntil)!;

const stateOf = (o: ExpiredHold): PropertyObjectState => ({
  status: o.status, reservedUntil: o.reservedUntil, bookedUntil: o.bookedUntil, holdDealId: o.holdDealId, holdBookingId: o.holdBookingId,
  soldAt: o.soldAt, statusSource: o.statusSource, statusChangedAt: o.statusChangedAt, updatedAt: o.updatedAt, version: o.version,
});

/** What the WARN "lost CRM release" says about one released object (logged once its batch committed). */
type LostRelease = Record<string, unknown>;

async function releaseOne(tx: Tx, o: ExpiredHold, phase: HoldPhase, asOf: Date, runId: string, guard: HoldExpirationGuard): Promise<LostRelease> {
  await guard(o);
  // INV-CHS-001: ExpirationJob may Release Reserved/Booked → Free. INV-CHS-003 (HoldOwnership) is NOT
  // checked: the job carries no DealId — the CRM release it stands in for was lost.
  const from = stateOf(o);
  const to = release(from, 'ExpirationJob', asOf);
  const { messageId } = await persistStatusTransition(tx, {
    object: o, from, to, correlationId: runId, causationId: null, dealId: o.holdDealId, bookingId: o.holdBookingId,
    reason: `hold-expiration: ${PHASES[phase].timerName} expired`, requestRecalc: false,
  });
  const expiredTimerAt = timerOf(o, phase);
  const overdueByMs = asOf.getTime() - expiredTimerAt.getTime();
  await tx.insert(holdReleases).values({
    propertyObjectId: o.id, tenantId: o.tenantId, projectId: o.projectId, holdDealId: o.holdDealId, fromStatus: o.status,
    expiredTimerAt, overdueByMs, statusSource: 'ExpirationJob', runId, messageId, releasedAt: asOf,
  });
  return {
    propertyObjectId: o.id, tenantId: o.tenantId, projectId: o.projectId, holdDealId: o.holdDealId, fromStatus: o.status,
    expiredTimer: PHASES[phase].timerName, expiredTimerAt: expiredTimerAt.toISOString(), overdueByMs, messageId,
  };
}

export function createPropertyObjectHoldExpirationJob(opts: HoldExpirationJobOptions = {}): JobDefinition {
  const guard = opts.guard ?? expirationJobGuard;
  return {
    name: 'property-object-hold-expiration',
    schedule: (env) => ({ cron: env.HOLD_EXPIRATION_SCHEDULE, timezone: 'UTC' }),
    async run(ctx: JobContext): Promise<HoldExpirationSummary> {
      const started = performance.now();
      const endTimer = holdExpirationCycleDuration.startTimer();
      const asOf = opts.now?.() ?? new Date();
      const graceMs = ctx.env.HOLD_EXPIRATION_GRACE_MS;
      const batchSize = ctx.env.HOLD_EXPIRATION_BATCH_SIZE;
      const cutoff = new Date(asOf.getTime() - graceMs);
      const { db } = ctx.database;
      const log = ctx.logger;
      const summary: HoldExpirationSummary = {
        AsOf: asOf.toISOString(), ReservedReleasedCount: 0, BookedReleasedCount: 0, SkippedLockedCount: 0, DurationMs: 0, Errors: 0, Backlog: 0, Stopped: false,
      };
      log.info({ asOf: asOf.toISOString(), holdGraceMs: graceMs, batchSize }, 'cycle started');
      try {
        for (const phase of ['reserved', 'booked'] as const) {
          // cancellation: checked before each batch; a batch in hand commits or rolls back whole
          if (ctx.signal.aborted) {
            summary.Stopped = true;
            log.info({ phase }, 'stop requested; remaining phases left to the next cycle');
            break;
          }
          const released: LostRelease[] = await db.transaction(async (tx) => {
            const batch = await selectExpiredHoldsForUpdate(tx, phase, cutoff, batchSize);
            const skipped = await countSkippedLocked(tx, phase, cutoff, batch, batchSize);
            summary.SkippedLockedCount += skipped;
            log.info({ phase, count: batch.length, skippedLocked: skipped }, 'batch selected');
            const done: ExpiredHold[] = [];
            const lost: LostRelease[] = [];
            for (const o of batch) {
              try {
                lost.push(await tx.transaction((sp) => releaseOne(sp, o, phase, asOf, ctx.runId, guard))); // SAVEPOINT per object
                done.push(o);
              } catch (e) {
                if (!isItemError(e)) throw e;
                // poison object: excluded from the batch, stays held for the next cycle
                summary.Errors += 1;
                log.error({ propertyObjectId: o.id, phase, err: { message: (e as Error).message, code: (e as AppError).code ?? pgErrorCode(e) } }, 'item failed');
              }
            }
            // ProjectAggregatesRecalcRequested, once per project, in id order (no deadlock between batches)
            await requestProjectAggregatesRecalc(tx, done.map((o) => o.projectId), asOf);
            return lost;
          });
          // each committed release means the CRM release was lost (a rolled-back batch logs none)
          for (const fields of released) log.warn(fields, 'lost CRM release');
          if (phase === 'reserved') summary.ReservedReleasedCount = released.length;
          else summary.BookedReleasedCount = released.length;
          holdExpirationItems.inc({ phase }, released.length);
        }
        const [reservedBacklog, bookedBacklog] = [await countExpiredHolds(db, 'reserved', cutoff), await countExpiredHolds(db, 'booked', cutoff)];
        summary.Backlog = reservedBacklog + bookedBacklog;
        holdExpirationBacklog.set(summary.Backlog);
        summary.DurationMs = Math.round(performance.now() - started);
        log.info({
          reservedReleasedCount: summary.ReservedReleasedCount, bookedReleasedCount: summary.BookedReleasedCount,
          skippedLocked: summary.SkippedLockedCount, errors: summary.Errors, backlog: summary.Backlog, stopped: summary.Stopped, durationMs: summary.DurationMs,
        }, 'cycle completed');
        return summary;
      } catch (e) {
        // infrastructure error: the batch rolled back and its locks are gone; the next cycle retries
        summary.DurationMs = Math.round(performance.now() - started);
        holdExpirationErrors.inc();
        log.error({ err: { message: (e as Error).message, code: pgErrorCode(e) }, durationMs: summary.DurationMs }, 'cycle failed; batch rolled back');
        (e as Error & { summary?: JobSummary }).summary = summary;
        throw e;
      } finally {
        holdExpirationRuns.inc();
        holdExpirationSkipLocked.inc(summary.SkippedLockedCount);
        holdExpirationErrors.inc(summary.Errors);
        endTimer();
      }
    },
  };
}

export const propertyObjectHoldExpirationJob = createPropertyObjectHoldExpirationJob();
