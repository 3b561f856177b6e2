import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db';
import { crmError } from '../errors';
import { bookings, deals } from '../schema';
import type { BookingTransition } from '../booking';
import { ACTIVE_STATUSES } from '../booking';
import type { DealChange } from '../deal';

/** Persisting a command's transition: the booking row, the deal status, and the count the deal rule needs. */

/** Writes the booking's next state; optimistic concurrency: the row must still be at the version it was read at. */
export async function saveBooking(tx: Tx, transition: BookingTransition): Promise<void> {
  const b = transition.booking;
  const rows = await tx
    .update(bookings)
    .set({
      status: b.status,
      paymentStatus: b.paymentStatus,
      reserveExpiresAt: b.reserveExpiresAt,
      bookingExpiresAt: b.bookingExpiresAt,
      bookedAt: b.bookedAt,
      contractDocument: b.contractDocument,
      receiptDocument: b.receiptDocument,
      requisiteSetId: b.requisiteSetId,
      requisiteSetVersion: b.requisiteSetVersion,
      closedReason: b.closedReason,
      closedAt: b.closedAt,
      version: b.version,
      updatedAt: b.updatedAt,
    })
    .where(and(eq(bookings.id, b.id), eq(bookings.version, b.version - 1)))
    .returning({ id: bookings.id })
    // prepared (named): one round trip, pipelined with the statements sent beside it (platform/db.ts)
    .prepare('crm_booking_save')
    .execute();
  if (rows.length !== 1) {
    throw crmError('CRM_BOOKING_VERSION_CONFLICT', 'The booking has changed meanwhile', { bookingId: b.id, expectedVersion: b.version - 1 });
  }
}

export async function saveDealStatus(tx: Tx, dealId: string, change: DealChange, now: Date): Promise<void> {
  await tx
    .update(deals)
    .set({ status: change.to, version: sql`${deals.version} + 1`, updatedAt: now })
    .where(and(eq(deals.id, dealId), eq(deals.status, change.from)))
    .prepare('crm_deal_status_save')
    .execute();
}

/** Active bookings of the deal other than `exceptBookingId` (the deal row is locked by the caller). */
export async function otherActiveBookings(tx: Tx, dealId: string, exceptBookingId: string): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(bookings)
    .where(and(eq(bookings.dealId, dealId), ne(bookings.id, exceptBookingId), inArray(bookings.status, [...ACTIVE_STATUSES])));
  return row?.n ?? 0;
}
