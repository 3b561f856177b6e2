import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import { preparedWrite, type Tx } from '../../platform/db';
import { crmError } from '../errors';
import { bookings, deals } from '../schema';
import type { BookingTransition } from '../booking';
import { ACTIVE_STATUSES } from '../booking';
import type { DealChange } from '../deal';

/** Persisting a command's transition: the booking row, the deal status, and the count the deal rule needs. */

// The two writes below are built once and run prepared (platform/db.ts preparedWrite): one round trip
// each, pipelined with the statements sent beside them; no drizzle query building per call.
const updateBooking = preparedWrite('crm_booking_save', bookings,
  ['status', 'paymentStatus', 'reserveExpiresAt', 'bookingExpiresAt', 'bookedAt', 'contractDocument', 'receiptDocument', 'requisiteSetId',
    'requisiteSetVersion', 'closedReason', 'closedAt', 'extensionCount', 'version', 'updatedAt'],
  (db, values) => db.update(bookings).set(values)
    .where(and(eq(bookings.id, sql.placeholder('whereId')), eq(bookings.version, sql.placeholder('whereVersion'))))
    .returning({ id: bookings.id }));

/** Writes the booking's next state; optimistic concurrency: the row must still be at the version it was read at. */
export async function saveBooking(tx: Tx, transition: BookingTransition): Promise<void> {
  const b = transition.booking;
  const rows = await updateBooking(tx, b, { whereId: b.id, whereVersion: b.version - 1 });
  if (rows.length !== 1) {
    throw crmError('CRM_BOOKING_VERSION_CONFLICT', 'The booking has changed meanwhile', { bookingId: b.id, expectedVersion: b.version - 1 });
  }
}

const updateDealStatus = preparedWrite('crm_deal_status_save', deals, ['status', 'updatedAt'],
  (db, values) => db.update(deals).set({ ...values, version: sql`${deals.version} + 1` })
    .where(and(eq(deals.id, sql.placeholder('whereId')), eq(deals.status, sql.placeholder('whereStatus')))));

export async function saveDealStatus(tx: Tx, dealId: string, change: DealChange, now: Date): Promise<void> {
  await updateDealStatus(tx, { status: change.to, updatedAt: now }, { whereId: dealId, whereStatus: change.from });
}

/** Active bookings of the deal other than `exceptBookingId` (the deal row is locked by the caller). */
export async function otherActiveBookings(tx: Tx, dealId: string, exceptBookingId: string): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(bookings)
    .where(and(eq(bookings.dealId, dealId), ne(bookings.id, exceptBookingId), inArray(bookings.status, [...ACTIVE_STATUSES])));
  return row?.n ?? 0;
}
