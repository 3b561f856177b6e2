import { z } from 'zod';
import { canSeeTenant, type Actor } from '../auth/actor';
import { reholdForCrmBooking, releaseHoldManually, releaseHoldManuallyOutput } from '../chessboard/commands';
import { recordAudit } from '../platform/audit';
import { isActive, type BookingRecord } from '../crm/booking';
import { cancelBookingCommand } from '../crm/commands/cancel-booking';
import { bookingOutput } from '../crm/commands/output';
import { activeBookingOfObject, bookingRecordById } from '../crm/queries';
import type { Tx } from '../platform/db';
import { DIVERGENCE_AUDIT_ACTION } from './reconciliation';
import { recheckAfterRepair } from './reconciliation-findings';
import { AppError } from '../platform/errors';
import { commandContext, type CommandContext } from '../platform/command-context';

/**
 * Repairs that keep crm and chessboard agreeing. Each composes the owners' own commands in
 * one transaction — crm's cancel (booking, deal projection, timeline, booking-cancelled), chessboard's
 * release / re-hold (object, history, status-changed, audit) — so either both sides change or neither.
 *
 *  - releaseHoldChecked: the manual release of the drawer, the holds page and reconciliation. When crm
 *    still has an active booking of the object the release is refused (OPS_RELEASE_CRM_BOOKING_ACTIVE,
 *    naming the booking and its deadline) unless the caller chose: `cancel_booking` (crm's cancel runs
 *    too, with its events) or `keep_booking` (chessboard only — recorded as a deliberate divergence,
 *    audit `ops.release.divergence`, which reconciliation reports with its two repairs).
 *  - reholdBooking / cancelBookingInRepair: the two repairs of a divergence (object Free, crm booking active).
 *
 * Each also re-checks the reconciliation findings of its booking and object in the same transaction
 * (recheckAfterRepair), so the page the operator repaired from does not keep listing what was just repaired.
 */

export const REPAIR_ERRORS = {
  CRM_BOOKING_ACTIVE: 'OPS_RELEASE_CRM_BOOKING_ACTIVE',
  BOOKING_NOT_ACTIVE: 'OPS_REPAIR_BOOKING_NOT_ACTIVE',
  BOOKING_NOT_FOUND: 'OPS_RECONCILIATION_BOOKING_NOT_FOUND',
} as const;

export const CRM_BOOKING_CHOICES = ['cancel_booking', 'keep_booking'] as const;
export type CrmBookingChoice = (typeof CRM_BOOKING_CHOICES)[number];

/** The input of every manual release procedure (zod; reason typed by the operator). */
export const releaseHoldInput = z.strictObject({
  propertyObjectId: z.uuid(),
  reason: z.string().trim().min(1).max(500),
  /** required when crm still has an active booking of the object */
  crmBooking: z.enum(CRM_BOOKING_CHOICES).optional(),
});

/** The release as the chessboard answers it, and what became of crm's active booking of the object (null: there was none). */
export const releaseHoldOutput = releaseHoldManuallyOutput.extend({
  crmBooking: z.object({ bookingId: z.guid(), bookingStatus: bookingOutput.shape.status, deadline: z.date(), choice: z.enum(CRM_BOOKING_CHOICES) }).nullable(),
});

export { DIVERGENCE_AUDIT_ACTION };

/** Who repairs, from the procedure's command context: the repairs hand it on to the owners' commands. */
export const repairedBy = (cctx: CommandContext<Actor>) => ({ actor: cctx.actor, correlationId: cctx.correlationId, now: cctx.now });

/** a release's log line: ids, statuses and the choice made for crm's booking */
export const releaseLogFields = (r: z.infer<typeof releaseHoldOutput>) => ({
  propertyObjectId: r.propertyObjectId, toStatus: r.toStatus, version: r.version, messageId: r.messageId,
  bookingId: r.crmBooking?.bookingId ?? null, crmBooking: r.crmBooking?.choice ?? null,
});

const deadlineOf = (b: BookingRecord): Date => (b.status === 'Booked' && b.bookingExpiresAt ? b.bookingExpiresAt : b.reserveExpiresAt);

export interface ReleaseHoldCheckedInput {
  propertyObjectId: string;
  reason: string;
  crmBooking?: CrmBookingChoice;
  actor: Actor;
  correlationId?: string;
  now?: Date;
}

export async function releaseHoldChecked(tx: Tx, input: ReleaseHoldCheckedInput): Promise<z.infer<typeof releaseHoldOutput>> {
  const now = input.now ?? new Date();
  const active = await activeBookingOfObject(tx, input.actor, input.propertyObjectId);
  if (active && !input.crmBooking) {
    throw new AppError(
      REPAIR_ERRORS.CRM_BOOKING_ACTIVE,
      'PRECONDITION_FAILED',
      `crm booking ${active.id} of this object is still ${active.status} until ${deadlineOf(active).toISOString()}: choose to cancel it too, or to release the chessboard only`,
      { bookingId: active.id, bookingStatus: active.status, deadline: deadlineOf(active).toISOString() },
    );
  }
  const released = await releaseHoldManually(
    tx, { propertyObjectId: input.propertyObjectId, reason: input.reason }, commandContext(input.actor, input.correlationId, now),
  );
  const result = await (async () => {
    if (!active) return { ...released, crmBooking: null };
    const summary = { bookingId: active.id, bookingStatus: active.status, deadline: deadlineOf(active), choice: input.crmBooking! };
    if (input.crmBooking === 'cancel_booking') {
      const cancelled = await cancelBookingCommand(
        tx, { bookingId: active.id, reason: input.reason }, commandContext(input.actor, input.correlationId ?? '', now), 'booking.cancelInRepair',
      );
      return { ...released, crmBooking: { ...summary, bookingStatus: cancelled.status } };
    }
    await recordAudit(tx, {
      actor: input.actor, action: DIVERGENCE_AUDIT_ACTION, targetType: 'Booking', targetId: active.id, reason: input.reason, at: now,
      details: { propertyObjectId: input.propertyObjectId, bookingStatus: active.status, deadline: deadlineOf(active).toISOString(), releaseMessageId: released.messageId },
    });
    return { ...released, crmBooking: summary };
  })();
  // the object's findings leave the reconciliation page with the release; a divergence just chosen is listed at once
  await recheckAfterRepair(tx, { now, bookingIds: active ? [active.id] : [], objectIds: [input.propertyObjectId], correlationId: input.correlationId });
  return result;
}

async function activeBookingForRepair(tx: Tx, actor: Actor, bookingId: string): Promise<BookingRecord> {
  const b = await bookingRecordById(tx, actor, bookingId);
  if (!b || !canSeeTenant(actor, b.tenantId)) throw new AppError(REPAIR_ERRORS.BOOKING_NOT_FOUND, 'NOT_FOUND', 'booking not found', { bookingId });
  if (!isActive(b.status)) {
    throw new AppError(REPAIR_ERRORS.BOOKING_NOT_ACTIVE, 'PRECONDITION_FAILED', `booking is ${b.status}, not active`, { bookingId, status: b.status });
  }
  return b;
}

/** Divergence repair "re-hold": chessboard holds the object again for crm's active booking. */
export async function reholdBooking(tx: Tx, input: { bookingId: string; reason: string; actor: Actor; correlationId?: string; now?: Date }) {
  const b = await activeBookingForRepair(tx, input.actor, input.bookingId);
  const result = await reholdForCrmBooking(tx, {
    booking: {
      id: b.id, tenantId: b.tenantId, dealId: b.dealId, propertyObjectId: b.propertyObjectId, status: b.status as 'Reserved' | 'AwaitingPayment' | 'Booked',
      version: b.version, reserveExpiresAt: b.reserveExpiresAt, bookingExpiresAt: b.bookingExpiresAt, createdAt: b.createdAt,
    },
    reason: input.reason,
  }, commandContext(input.actor, input.correlationId, input.now));
  await recheckAfterRepair(tx, { now: input.now ?? new Date(), bookingIds: [b.id], objectIds: [b.propertyObjectId], correlationId: input.correlationId });
  return { bookingId: b.id, ...result };
}

/** Divergence repair "cancel booking": crm's cancel command (booking-cancelled, deal projection, timeline). */
export async function cancelBookingInRepair(tx: Tx, input: { bookingId: string; reason: string; actor: Actor; correlationId?: string; now?: Date }) {
  const b = await activeBookingForRepair(tx, input.actor, input.bookingId);
  const cancelled = await cancelBookingCommand(
    tx, { bookingId: b.id, reason: input.reason }, commandContext(input.actor, input.correlationId ?? '', input.now), 'booking.cancelInRepair',
  );
  await recheckAfterRepair(tx, { now: input.now ?? new Date(), bookingIds: [b.id], objectIds: [b.propertyObjectId], correlationId: input.correlationId });
  return { bookingId: cancelled.id, bookingStatus: cancelled.status, bookingVersion: cancelled.version, propertyObjectId: cancelled.propertyObjectId };
}
