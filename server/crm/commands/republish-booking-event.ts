import { eq, sql } from 'drizzle-orm';
import { canSeeTenant, type Actor } from '../../auth/actor';
import type { Tx } from '../../platform/db';
import { writeOutbox } from '../../platform/outbox/write';
import type { BookingRecord } from '../booking';
import {
  bookingCancelledEvent, bookingConfirmedEvent, bookingCreatedEvent, bookingExpiredEvent, dealSaleStartedEvent,
} from '../events';
import { bookings } from '../schema';

/**
 * The event that states a booking's current state (what crm would publish for it now), with the
 * booking's current version as bookingVersion — the chessboard consumer applies it only if it has not
 * applied that version yet (DESIGN decision 3), so repeating it is safe.
 */
async function currentStateEvent(tx: Tx, b: BookingRecord, meta: { correlationId: string; now: Date }) {
  const closedAt = b.closedAt ?? b.updatedAt;
  switch (b.status) {
    case 'Reserved':
    case 'AwaitingPayment':
      return bookingCreatedEvent(b, meta);
    case 'Booked':
      return bookingConfirmedEvent(b, meta);
    case 'ReserveExpired':
      return bookingExpiredEvent(b, 'Reserve', b.reserveExpiresAt, { ...meta, now: closedAt });
    case 'BookingExpired':
      return bookingExpiredEvent(b, 'Booking', b.bookingExpiresAt ?? b.reserveExpiresAt, { ...meta, now: closedAt });
    case 'Cancelled': {
      const [last] = await tx.execute<{ from_status: string | null }>(sql`
        SELECT from_status FROM crm.booking_timeline WHERE booking_id = ${b.id} AND to_status = 'Cancelled' ORDER BY at DESC, id DESC LIMIT 1`);
      const from = last?.from_status;
      const fromStatus = from === 'Reserved' || from === 'AwaitingPayment' || from === 'Booked' ? from : b.bookedAt ? 'Booked' : 'Reserved';
      return bookingCancelledEvent(b, fromStatus, b.closedReason ?? 'cancelled', { ...meta, now: closedAt });
    }
    case 'Completed':
      return dealSaleStartedEvent(b, { ...meta, now: closedAt });
  }
}

export interface RepublishedBookingEvent {
  booking: BookingRecord;
  topic: string;
  messageId: string;
}

/**
 * Re-publish a booking's current state (ops' reconciliation repair "republish"; crm.outbox is
 * crm's): a new crm.outbox row repeating the booking's current-state event with the same bookingVersion
 * (the relay publishes it; consumers dedupe by version). The booking is not changed. null when the
 * booking does not exist or is outside the actor's tenant scope (the caller answers "not found").
 */
export async function republishBookingEvent(
  tx: Tx,
  input: { bookingId: string; actor: Actor; correlationId: string; now: Date },
): Promise<RepublishedBookingEvent | null> {
  // FOR SHARE: a crm command cannot move the booking while its state is being repeated
  const [b] = await tx.select().from(bookings).where(eq(bookings.id, input.bookingId)).for('share');
  if (!b || !canSeeTenant(input.actor, b.tenantId)) return null;
  const event = await currentStateEvent(tx, b, { correlationId: input.correlationId, now: input.now });
  const messageId = await writeOutbox(tx, 'crm', event);
  return { booking: b, topic: event.topic, messageId };
}
