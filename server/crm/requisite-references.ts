import { and, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { ACTIVE_BOOKING_STATUSES, bookings } from './schema';

/**
 * crm's module API for profile (server/profile): what crm knows about the requisite sets its bookings
 * reference. profile reads no crm table; it asks these (and crm asks profile's module-api.ts about the
 * sets). Ids, statuses and versions only.
 */

/** How many active bookings (Reserved, AwaitingPayment, Booked) reference the set: erasure needs 0. */
export async function activeBookingsReferencingRequisiteSet(db: DbOrTx, requisiteSetId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(bookings)
    .where(and(eq(bookings.requisiteSetId, requisiteSetId), inArray(bookings.status, [...ACTIVE_BOOKING_STATUSES])));
  return row?.n ?? 0;
}

export interface BookingRequisiteReference {
  bookingId: string;
  tenantId: string;
  createdBy: string | null;
  requisiteSetId: string | null;
  requisiteSetVersion: number | null;
}

/** The set a booking references (the reveal "for booking X" checks it is this booking's set). */
export async function bookingRequisiteReference(db: DbOrTx, bookingId: string): Promise<BookingRequisiteReference | null> {
  const [row] = await db
    .select({
      bookingId: bookings.id, tenantId: bookings.tenantId, createdBy: bookings.createdBy,
      requisiteSetId: bookings.requisiteSetId, requisiteSetVersion: bookings.requisiteSetVersion,
    })
    .from(bookings)
    .where(eq(bookings.id, bookingId));
  return row ?? null;
}
