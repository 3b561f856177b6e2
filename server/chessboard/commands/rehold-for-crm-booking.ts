import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { storableDate } from '../../platform/date-input';
import type { Tx } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { book, PROPERTY_OBJECT_ERRORS, reserve, stateOf } from '../property-object';
import { crmBookingVersions } from '../schema';
import { assertMayChangeStatusManually, lockVisiblePropertyObject, parseInput, reasonInput, writeAudit } from './command-support';
import { persistStatusTransition } from '../property-object-persistence';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

/** crm's active booking as crm reports it (the caller asked crm; chessboard reads no crm table). */
const crmActiveBooking = z.object({
  id: z.string(),
  tenantId: z.string(),
  dealId: z.string(),
  propertyObjectId: z.string(),
  status: z.enum(['Reserved', 'AwaitingPayment', 'Booked']),
  version: z.number(),
  reserveExpiresAt: storableDate(),
  bookingExpiresAt: storableDate().nullable(),
  /** crm's creation time (DESIGN decision 9 orders the booking's later events against other bookings by it) */
  createdAt: storableDate().optional(),
});
export type CrmActiveBooking = z.infer<typeof crmActiveBooking>;

export const reholdForCrmBookingInput = z.object({ booking: crmActiveBooking, reason: reasonInput });
export type ReholdForCrmBookingInput = z.input<typeof reholdForCrmBookingInput>;

/**
 * Repair "re-hold" of a deliberate divergence (a hold released by hand while crm's booking stayed
 * active): the Free object is held again for that booking with crm's status and timer — Reserve, or
 * Book (catch-up) for a Booked booking, status source Crm since it restates crm's state — and the
 * release's tombstone of the booking is lifted (applied version = the booking's current one), so the
 * booking's next events (confirm, extend, cancel, expiry) apply again. Refused when the object is not
 * Free (held by someone, Sold, Hidden). Status-changed event, history and audit in one transaction.
 */
export async function reholdForCrmBooking(tx: Tx, given: ReholdForCrmBookingInput, ctx: CommandContext<Actor>) {
  const { correlationId, now: at } = ctx;
  assertMayChangeStatusManually(ctx.actor);
  const input = parseInput(reholdForCrmBookingInput, given);
  const { reason } = input;
  const b = input.booking;
  const object = await lockVisiblePropertyObject(tx, ctx.actor, b.propertyObjectId, b.tenantId);
  if (object.status !== 'Free') {
    throw new AppError(PROPERTY_OBJECT_ERRORS.NOT_AVAILABLE, 'PRECONDITION_FAILED', `property object is ${object.status}; only a Free object can be held again`, { status: object.status });
  }
  const from = stateOf(object);
  const hold = { dealId: b.dealId, bookingId: b.id };
  const to = b.status === 'Booked'
    ? book(from, { ...hold, bookedUntil: b.bookingExpiresAt ?? b.reserveExpiresAt }, at, { catchUp: true })
    : reserve(from, { ...hold, reservedUntil: b.reserveExpiresAt }, at);
  const { messageId } = await persistStatusTransition(tx, {
    object, from, to, correlationId, actorId: ctx.actor.userId, reason, dealId: b.dealId, bookingId: b.id,
  });
  // the booking holds the object again: its tombstone (left by the manual release) no longer applies
  await tx
    .insert(crmBookingVersions)
    .values({ bookingId: b.id, propertyObjectId: object.id, dealId: b.dealId, appliedVersion: b.version, released: false, bookingCreatedAt: b.createdAt ?? null, updatedAt: at })
    .onConflictDoUpdate({
      target: crmBookingVersions.bookingId,
      set: {
        released: false, appliedVersion: sql`greatest(${crmBookingVersions.appliedVersion}, excluded.applied_version)`,
        bookingCreatedAt: sql`coalesce(${crmBookingVersions.bookingCreatedAt}, excluded.booking_created_at)`, updatedAt: at,
      },
    });
  await writeAudit(tx, {
    actor: ctx.actor, action: 'chessboard.rehold', targetType: 'PropertyObject', targetId: object.id, reason, at,
    details: { bookingId: b.id, dealId: b.dealId, bookingStatus: b.status, bookingVersion: b.version, toStatus: to.status, messageId, version: to.version, correlationId },
  });
  return { propertyObjectId: object.id, fromStatus: from.status, toStatus: to.status, version: to.version, messageId };
}
