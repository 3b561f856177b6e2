import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Tx } from '../platform/db';
import { AppError, pgErrorCode } from '../platform/errors';
import type { PlatformEnv } from '../platform/env';
import type { JobContext, JobDefinition, JobSummary } from '../platform/jobs/types';
import type { ChessboardEnv } from './env';
import { lockPropertyObject, requestProjectAggregatesRecalc } from './property-object-persistence';
import { withSpan } from '../platform/tracing';
import {
  holdExpirationBacklog, holdExpirationCycleDuration, holdExpirationErrors, holdExpirationItems, holdExpirationRuns, holdExpirationSkipLocked,
} from './metrics';
import { assertTransitionAllowed, PROPERTY_OBJECT_ERRORS, release, stateOf, type PropertyObjectState } from './property-object';
import {
  countExpiredHolds, countSkippedLocked, lockExpiredHolds, PHASES, writeHoldReleases, type ExpiredHold, type HoldPhase,
} from './property-object-hold-expiration.sql';

type ChessboardJobEnv = PlatformEnv & ChessboardEnv;

/**
 * Job `property-object-hold-expiration`: the safety net for lost CRM releases. Every 60 s (UTC) it
 * returns to Free the objects stuck in a hold whose timer expired more than HoldGrace (10 min) ago.
 * The regular release is CRM's (booking-expiration → release topics → crm-property-object-status);
 * each object released here means that release was lost, hence a WARN and a hold_releases row each.
 *
 * One cycle = two phases in order (Reserved, then Booked), each ONE transaction over at most BatchSize
 * rows selected FOR UPDATE SKIP LOCKED (no global lock: parallel instances and the consumer coordinate
 * through row locks). Cross-tenant (a System worker): no tenant filter. A batch is written as one
 * statement under one SAVEPOINT (five round trips a phase: BEGIN + the locking SELECT, the skipped-locked
 * count + SAVEPOINT, the write, RELEASE, COMMIT); if an object's row refuses, the batch is redone one object
 * per SAVEPOINT so that only that object stays held.
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
const isVersionConflict = (e: unknown): boolean => e instanceof AppError && e.code === PROPERTY_OBJECT_ERRORS.VERSION_CONFLICT;

function isItemError(e: unknown): boolean {
  if (e instanceof AppError) return true;
  const code = pgErrorCode(e);
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

const timerOf = (o: ExpiredHold, phase: HoldPhase): Date => (phase === 'reserved' ? o.reservedUntil : o.bookedUntil)!;

/** What the WARN "lost CRM release" says about one released object (logged once its batch committed). */
type LostRelease = Record<string, unknown>;

/** One object's release, decided before anything is written. */
interface PlannedRelease {
  object: ExpiredHold;
  from: PropertyObjectState;
  to: PropertyObjectState;
}

async function planRelease(o: ExpiredHold, asOf: Date, guard: HoldExpirationGuard): Promise<PlannedRelease> {
  await guard(o);
  // INV-CHS-001: ExpirationJob may Release Reserved/Booked → Free. INV-CHS-003 (HoldOwnership) is NOT
  // checked: the job carries no DealId — the CRM release it stands in for was lost.
  const from = stateOf(o);
  return { object: o, from, to: release(from, 'ExpirationJob', asOf) };
}

/**
 * Writes the planned releases: the objects, their status-changed events and history rows, a
 * hold_releases row each and (with `recalcProjects`) the projects' recalc request, as ONE statement
 * whatever the batch size (writeHoldReleases): one object at a time would cost ~8 round trips per
 * object, nearly all of a phase's time.
 */
async function writeReleases(
  tx: Tx, planned: PlannedRelease[], phase: HoldPhase, asOf: Date, runId: string, opts: { requestRecalc: boolean },
): Promise<LostRelease[]> {
  if (planned.length === 0) return [];
  const rows = planned.map(({ object: o }) => {
    const expiredTimerAt = timerOf(o, phase);
    return {
      property_object_id: o.id, tenant_id: o.tenantId, project_id: o.projectId, hold_deal_id: o.holdDealId, from_status: o.status,
      expired_timer_at: expiredTimerAt.toISOString(), overdue_by_ms: asOf.getTime() - expiredTimerAt.getTime(), status_source: 'ExpirationJob',
      run_id: runId, message_id: randomUUID(), released_at: asOf.toISOString(),
    };
  });
  await writeHoldReleases(tx, {
    transitions: planned.map(({ object: o, from, to }, i) => ({
      object: o, from, to, correlationId: runId, causationId: null, dealId: o.holdDealId, bookingId: o.holdBookingId,
      reason: `hold-expiration: ${PHASES[phase].timerName} expired`, requestRecalc: false, messageId: rows[i].message_id,
    })),
    // the rest of each hold_releases row is its transition's (hold_deal_id = dealId) and the batch's
    timers: planned.map(({ object: o }, i) => ({ expiredTimerAt: timerOf(o, phase), overdueByMs: rows[i].overdue_by_ms })),
    runId, releasedAt: asOf, releaseStatusSource: 'ExpirationJob',
    // ProjectAggregatesRecalcRequested, once per project of the batch, projects locked in id order
    recalcProjects: opts.requestRecalc ? planned.map((p) => p.object.projectId) : [],
    recalcAt: asOf,
  });
  return rows.map((r) => ({
    propertyObjectId: r.property_object_id, tenantId: r.tenant_id, projectId: r.project_id, holdDealId: r.hold_deal_id, fromStatus: r.from_status,
    expiredTimer: PHASES[phase].timerName, expiredTimerAt: r.expired_timer_at, overdueByMs: r.overdue_by_ms, messageId: r.message_id,
  }));
}

export function createPropertyObjectHoldExpirationJob(opts: HoldExpirationJobOptions = {}): JobDefinition<ChessboardJobEnv> {
  const guard = opts.guard ?? expirationJobGuard;
  return {
    name: 'property-object-hold-expiration',
    schedule: (env) => ({ cron: env.HOLD_EXPIRATION_SCHEDULE, timezone: 'UTC' }),
    async run(ctx: JobContext<ChessboardJobEnv>): Promise<HoldExpirationSummary> {
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
            const batch = await lockExpiredHolds(tx, phase, cutoff, batchSize);
            // the skipped-locked count runs while the releases are planned below (planning does no I/O)
            const skippedCount = countSkippedLocked(tx, phase, cutoff, batch, batchSize);
            skippedCount.catch(() => {}); // awaited below; a failure (connection lost) must not surface as unhandled meanwhile
            // the guard and the transition per object first: a refused object is left out
            const planned: PlannedRelease[] = [];
            const refused: { o: ExpiredHold; e: unknown }[] = [];
            for (const o of batch) {
              try {
                planned.push(await planRelease(o, asOf, guard));
              } catch (e) {
                if (!isItemError(e)) throw e;
                refused.push({ o, e });
              }
            }
            // all writes of the batch under one SAVEPOINT (postgres.js's savepoint scope: a failed statement
            // outside one fails the whole transaction), sent while the skipped-locked count is in flight; if
            // an object's row refuses (constraint or data error), roll back to it and write one object per
            // SAVEPOINT to isolate the poison one
            const batchWrite = tx.transaction((sp) => writeReleases(sp, planned, phase, asOf, ctx.runId, { requestRecalc: true }));
            batchWrite.catch(() => {}); // awaited below, after the logs of the selection (a failure must not surface as unhandled meanwhile)
            const skipped = await skippedCount;
            summary.SkippedLockedCount += skipped;
            log.info({ phase, count: batch.length, skippedLocked: skipped }, 'batch selected');
            const itemFailed = (o: ExpiredHold, e: unknown) => {
              // poison object: excluded from the batch, stays held for the next cycle
              summary.Errors += 1;
              log.error({ propertyObjectId: o.id, tenantId: o.tenantId, phase, err: { message: (e as Error).message, code: (e as AppError).code ?? pgErrorCode(e) } }, 'item failed');
            };
            for (const { o, e } of refused) itemFailed(o, e);
            try {
              return await batchWrite;
            } catch (e) {
              if (!isItemError(e)) throw e;
            }
            const done: PlannedRelease[] = [];
            const lost: LostRelease[] = [];
            const writeOne = (p: PlannedRelease) => tx.transaction((sp) => writeReleases(sp, [p], phase, asOf, ctx.runId, { requestRecalc: false }));
            for (const p of planned) {
              await withSpan('hold-expiration.item', { attributes: { propertyObjectId: p.object.id, tenantId: p.object.tenantId, phase } }, async () => {
                try {
                  lost.push(...(await writeOne(p)));
                  done.push(p);
                  return;
                } catch (itemError) {
                  if (!isItemError(itemError)) throw itemError;
                  if (!isVersionConflict(itemError)) return itemFailed(p.object, itemError);
                }
                // the spec: a version conflict (a writer committed between our read and our write) is retried
                // with a re-read — the object may no longer be due (then it is simply not released) — not poison
                const fresh = await lockPropertyObject(tx, p.object.id);
                const timer = fresh ? (phase === 'reserved' ? fresh.reservedUntil : fresh.bookedUntil) : null;
                if (!fresh || fresh.status !== PHASES[phase].status || !timer || timer.getTime() >= cutoff.getTime()) {
                  log.info({ propertyObjectId: p.object.id, tenantId: p.object.tenantId, phase, status: fresh?.status ?? null }, 'version conflict; re-read: no longer due');
                  return;
                }
                try {
                  const again = await planRelease(fresh, asOf, guard);
                  lost.push(...(await writeOne(again)));
                  done.push(again);
                  log.info({ propertyObjectId: p.object.id, tenantId: p.object.tenantId, phase }, 'version conflict; released after a re-read');
                } catch (retryError) {
                  if (!isItemError(retryError)) throw retryError;
                  itemFailed(p.object, retryError);
                }
              });
            }
            // ProjectAggregatesRecalcRequested, once per project, in id order (no deadlock between batches)
            await requestProjectAggregatesRecalc(tx, done.map((p) => p.object.projectId), asOf);
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
