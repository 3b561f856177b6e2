import { and, eq } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../platform/db';
import { crmError } from '../errors';
import { bookingPrograms, bookings, deals } from '../schema';
import type { BookingRecord, ProgramTerms } from '../booking';
import { expiredError } from '../booking';
import type { DealRecord } from '../deal';
import { clockUnderLock, type CommandContext } from './context';
import { tenantFilter } from './tenant-scope';

// Loading with row locks.
// Lock order is deal → booking wherever both are locked, so two commands never wait on each other in a
// cycle; the expiration job never waits at all (SKIP LOCKED).

function bookingNotFound(bookingId: string): never {
  throw crmError('CRM_BOOKING_NOT_FOUND', 'No such booking', { bookingId });
}

/**
 * A stale expectedVersion. When what changed the booking meanwhile was the expiry worker, the caller
 * lost the race with booking-expiration: answer that domain reason with the missed deadline (the user
 * can do nothing with "changed by someone else, try again" — a retry is refused anyway).
 */
function checkExpectedVersion(booking: BookingRecord, expectedVersion: number | undefined): void {
  if (expectedVersion !== undefined && booking.version !== expectedVersion) {
    if (booking.status === 'ReserveExpired' || booking.status === 'BookingExpired') expiredError(booking);
    throw crmError('CRM_BOOKING_VERSION_CONFLICT', 'The booking has changed since you loaded it', {
      bookingId: booking.id,
      expectedVersion,
      actualVersion: booking.version,
      // what it is now: the UI says "now Booked" rather than "try again" (a retry may make no sense)
      status: booking.status,
    });
  }
}

/** The booking, locked FOR UPDATE for this transaction (a concurrent transition waits, then re-reads). */
export async function lockBooking(tx: Tx, ctx: CommandContext, bookingId: string, expectedVersion?: number): Promise<BookingRecord> {
  const [booking] = await tx
    .select()
    .from(bookings)
    .where(and(eq(bookings.id, bookingId), tenantFilter(ctx.actor, bookings.tenantId)))
    .for('update');
  if (!booking) bookingNotFound(bookingId);
  clockUnderLock(ctx);
  checkExpectedVersion(booking, expectedVersion);
  return booking;
}

/** The booking and its deal, both locked (deal first). */
export async function lockBookingWithDeal(
  tx: Tx,
  ctx: CommandContext,
  bookingId: string,
  expectedVersion?: number,
): Promise<{ booking: BookingRecord; deal: DealRecord }> {
  const [ref] = await tx
    .select({ dealId: bookings.dealId })
    .from(bookings)
    .where(and(eq(bookings.id, bookingId), tenantFilter(ctx.actor, bookings.tenantId)));
  if (!ref) bookingNotFound(bookingId);
  const [deal] = await tx.select().from(deals).where(eq(deals.id, ref.dealId)).for('update');
  const booking = await lockBooking(tx, ctx, bookingId, expectedVersion);
  if (!deal) throw crmError('CRM_DEAL_NOT_FOUND', 'No such deal', { dealId: ref.dealId });
  return { booking, deal };
}

export async function lockDeal(tx: Tx, ctx: CommandContext, dealId: string): Promise<DealRecord> {
  const [deal] = await tx
    .select()
    .from(deals)
    .where(and(eq(deals.id, dealId), tenantFilter(ctx.actor, deals.tenantId)))
    .for('update');
  if (!deal) throw crmError('CRM_DEAL_NOT_FOUND', 'No such deal', { dealId });
  clockUnderLock(ctx);
  return deal;
}

/** The program's terms. Booking programs belong to the developer's tenant: a foreign one is not found. */
export async function loadProgram(db: DbOrTx, programId: string, tenantId: string): Promise<ProgramTerms> {
  const [program] = await db
    .select({
      id: bookingPrograms.id,
      isPaid: bookingPrograms.isPaid,
      reserveDurationMinutes: bookingPrograms.reserveDurationMinutes,
      bookingDurationHours: bookingPrograms.bookingDurationHours,
    })
    .from(bookingPrograms)
    .where(and(eq(bookingPrograms.id, programId), eq(bookingPrograms.tenantId, tenantId)));
  if (!program) throw crmError('CRM_PROGRAM_NOT_FOUND', 'No such booking program', { programId });
  return program;
}
