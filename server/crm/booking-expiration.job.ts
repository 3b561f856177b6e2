import { and, count, eq, inArray, lt, notInArray, or, sql } from 'drizzle-orm';
import type { Actor } from '../auth/actor';
import type { Tx } from '../platform/db';
import type { Logger } from '../platform/logger';
import type { PlatformEnv } from '../platform/env';
import type { JobContext, JobDefinition } from '../platform/jobs/types';
import type { CrmEnv } from './env';
import { writeOutbox } from '../platform/outbox/write';
import { expireBooking } from './booking';
import { otherActiveBookings, saveBooking, saveDealStatus } from './commands/persistence';
import { writeTimeline } from './commands/timeline';
import { onBookingReleased } from './deal';
import { bookingExpiredEvent } from './events';
import { expirationItemsTotal, stuckInReserved } from './metrics';
import { bookings, deals } from './schema';

type CrmJobEnv = PlatformEnv & CrmEnv;

/**
 * booking-expiration — the timeout driver of the Booking saga (INV-BKG-5). Every cycle (60 s, UTC) it
 * moves Reserved/AwaitingPayment bookings past ReserveExpiresAt to ReserveExpired and Booked bookings
 * past BookingExpiresAt to BookingExpired, writes booking-expired (Phase Reserve | Booking) so that
 * chessboard releases the object, moves the deal back to Application and writes a timeline row.
 *
 * Rows are taken FOR UPDATE SKIP LOCKED in batches; each batch is one transaction, so parallel worker
 * instances split the work and a booking being confirmed/extended right now is skipped: whichever of
 * the two transitions locks the row first commits, the other re-reads and refuses, and exactly one
 * event is written. Idempotent by state: a booking that is no longer due is never selected.
 * SLO: a booking with deadline t expires no later than t + 60 s + the cycle's duration.
 */

const JOB_ACTOR: Actor = { userId: 'booking-expiration', role: 'system', tenantId: null };

export interface BookingExpirationSummary extends Record<string, unknown> {
  ReserveExpiredCount: number;
  BookingExpiredCount: number;
  /** due bookings left behind because another transaction held their row (or their deal's) */
  SkippedLockedCount: number;
  /** due bookings whose expiry failed (logged; retried next cycle) */
  FailedCount: number;
  Batches: number;
  DurationMs: number;
  Aborted: boolean;
}

/** INV-BKG-5: strictly after the deadline (INV-BKG-3 lets confirm through at exactly ReserveExpiresAt). */
const dueAt = (now: Date) =>
  or(
    and(inArray(bookings.status, ['Reserved', 'AwaitingPayment']), lt(bookings.reserveExpiresAt, now)),
    and(eq(bookings.status, 'Booked'), lt(bookings.bookingExpiresAt, now)),
  );

interface ExpiredItem {
  bookingId: string;
  dealId: string;
  propertyObjectId: string;
  phase: 'Reserve' | 'Booking';
  deadline: string;
  bookingVersion: number;
  messageId: string;
}

interface BatchResult {
  expired: ExpiredItem[];
  failedIds: string[];
  skippedLocked: number | null;
}

async function expireBatch(
  tx: Tx,
  opts: { now: Date; batchSize: number; runId: string; exclude: string[]; logger: Logger },
): Promise<BatchResult> {
  const { now, batchSize, runId, exclude, logger } = opts;
  const notFailed = exclude.length > 0 ? notInArray(bookings.id, exclude) : undefined;
  // FOR UPDATE OF takes unqualified table names (drizzle's .for() would schema-qualify them), hence
  // sql here. The deal is locked too (its status is projected). Never wait: a row held elsewhere is skipped.
  const locked = await tx.execute<{ id: string }>(sql`
    SELECT ${bookings.id} AS id
      FROM ${bookings} JOIN ${deals} ON ${deals.id} = ${bookings.dealId}
     WHERE ${and(dueAt(now), notFailed)}
     ORDER BY CASE WHEN ${bookings.status} = 'Booked' THEN ${bookings.bookingExpiresAt} ELSE ${bookings.reserveExpiresAt} END, ${bookings.id}
     LIMIT ${batchSize}
       FOR UPDATE OF bookings, deals SKIP LOCKED`);
  const ids = [...locked].map((r) => r.id);
  const rows = ids.length > 0 ? (await tx.select().from(bookings).where(inArray(bookings.id, ids))).map((booking) => ({ booking })) : [];
  rows.sort((a, b) => ids.indexOf(a.booking.id) - ids.indexOf(b.booking.id));

  const result: BatchResult = { expired: [], failedIds: [], skippedLocked: null };
  const ctx = { actor: JOB_ACTOR, correlationId: runId, now };
  for (const { booking } of rows) {
    try {
      // a savepoint per booking: one bad row is logged and left for the next cycle, the batch goes on
      await tx.transaction(async (sp) => {
        const transition = expireBooking(booking, now);
        await saveBooking(sp, transition);
        const [deal] = await sp.select({ status: deals.status }).from(deals).where(eq(deals.id, booking.dealId));
        const dealChange = deal ? onBookingReleased(deal, await otherActiveBookings(sp, booking.dealId, booking.id)) : null;
        if (dealChange) await saveDealStatus(sp, booking.dealId, dealChange, now);
        const messageId = await writeOutbox(sp, 'crm', bookingExpiredEvent(transition.booking, transition.phase, transition.deadline, ctx));
        await writeTimeline(sp, ctx, transition, [messageId], transition.booking.closedReason);
        result.expired.push({
          bookingId: booking.id,
          dealId: booking.dealId,
          propertyObjectId: booking.propertyObjectId,
          phase: transition.phase,
          deadline: transition.deadline.toISOString(),
          bookingVersion: transition.booking.version,
          messageId,
        });
      });
    } catch (e) {
      result.failedIds.push(booking.id);
      logger.error({ bookingId: booking.id, err: { message: e instanceof Error ? e.message : String(e) } }, 'booking expiry failed');
    }
  }
  if (rows.length < batchSize) {
    // The last batch: whatever is still due (and not failed) was skipped because another transaction
    // holds its row — a confirm/extend in flight, or another worker instance.
    const failed = [...exclude, ...result.failedIds];
    const [left] = await tx
      .select({ n: count() })
      .from(bookings)
      .where(and(dueAt(now), failed.length > 0 ? notInArray(bookings.id, failed) : undefined));
    result.skippedLocked = left?.n ?? 0;
  }
  return result;
}

export interface BookingExpirationOptions {
  /** the clock (tests pass a fixed one); read once per batch */
  now?: () => Date;
}

export function createBookingExpirationJob(options: BookingExpirationOptions = {}): JobDefinition<CrmJobEnv> {
  const clock = options.now ?? (() => new Date());
  return {
    name: 'booking-expiration',
    schedule: (env) => ({ cron: env.BOOKING_EXPIRATION_SCHEDULE, timezone: 'UTC' }),
    async run(ctx: JobContext<CrmJobEnv>): Promise<BookingExpirationSummary> {
      const started = Date.now();
      const batchSize = ctx.env.BOOKING_EXPIRATION_BATCH_SIZE;
      const summary: BookingExpirationSummary = {
        ReserveExpiredCount: 0,
        BookingExpiredCount: 0,
        SkippedLockedCount: 0,
        FailedCount: 0,
        Batches: 0,
        DurationMs: 0,
        Aborted: false,
      };
      ctx.logger.info({ batchSize, trigger: ctx.trigger }, 'booking-expiration cycle started');
      const failedIds: string[] = [];
      try {
        for (;;) {
          if (ctx.signal.aborted) {
            summary.Aborted = true;
            break;
          }
          const now = clock();
          const batch = await ctx.database.db.transaction((tx) =>
            expireBatch(tx, { now, batchSize, runId: ctx.runId, exclude: failedIds, logger: ctx.logger }),
          );
          summary.Batches++;
          // counted and logged after the batch committed: nothing is reported that could still roll back
          for (const item of batch.expired) {
            if (item.phase === 'Reserve') summary.ReserveExpiredCount++;
            else summary.BookingExpiredCount++;
            expirationItemsTotal.inc({ phase: item.phase === 'Reserve' ? 'reserve' : 'booking' });
            ctx.logger.info(item, 'booking expired');
          }
          summary.FailedCount += batch.failedIds.length;
          failedIds.push(...batch.failedIds);
          if (batch.skippedLocked !== null) {
            summary.SkippedLockedCount = batch.skippedLocked;
            break;
          }
        }
        await updateStuckGauge(ctx, clock());
      } catch (e) {
        summary.DurationMs = Date.now() - started;
        ctx.logger.error({ ...summary, err: { message: e instanceof Error ? e.message : String(e) } }, 'booking-expiration cycle failed');
        // the run log records what was done before the failure
        throw Object.assign(e instanceof Error ? e : new Error(String(e)), { summary });
      }
      summary.DurationMs = Date.now() - started;
      ctx.logger.info(summary, 'booking-expiration cycle completed');
      return summary;
    },
  };
}

/** crm_bookings_stuck_in_reserved: bookings still in Reserved/AwaitingPayment past their reserve deadline after the cycle. */
async function updateStuckGauge(ctx: JobContext, now: Date): Promise<void> {
  const [row] = await ctx.database.db
    .select({ n: count() })
    .from(bookings)
    .where(and(inArray(bookings.status, ['Reserved', 'AwaitingPayment']), lt(bookings.reserveExpiresAt, now)));
  stuckInReserved.set(row?.n ?? 0);
}

export const bookingExpirationJob: JobDefinition<CrmJobEnv> = createBookingExpirationJob();
