import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { isHeld, PROPERTY_OBJECT_ERRORS, release, stateOf } from '../property-object';
import { holdReleases, PROPERTY_OBJECT_STATUSES } from '../schema';
import {
  assertMayChangeStatusManually, lockVisiblePropertyObject, parseInput, reasonInput, writeAudit,
} from './command-support';
import { persistStatusTransition, recordCrmBookingVersion } from '../property-object-persistence';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

export const releaseHoldManuallyInput = z.object({ propertyObjectId: z.string(), reason: reasonInput });
export type ReleaseHoldManuallyInput = z.input<typeof releaseHoldManuallyInput>;
/** a manual status change as it answers: the object's status before and after, its version and the event's id */
export const statusChangeOutput = z.object({
  propertyObjectId: z.guid(), fromStatus: z.enum(PROPERTY_OBJECT_STATUSES), toStatus: z.enum(PROPERTY_OBJECT_STATUSES), version: z.number().int(), messageId: z.guid(),
});
export const releaseHoldManuallyOutput = statusChangeOutput;

/**
 * Runbook "manual release of a stuck hold": Release with StatusSource = Manual (INV-CHS-001 allows
 * Reserved/Booked → Free). Refused with CHESSBOARD_PROPERTY_OBJECT_NOT_HELD if the object is not held.
 * Writes the status-changed event, a status-history row, a hold_releases row (who and why) and an
 * ops.audit_log row. The released booking is tombstoned, so its late CRM events do not re-hold the object.
 */
export async function releaseHoldManually(tx: Tx, given: ReleaseHoldManuallyInput, ctx: CommandContext<Actor>): Promise<z.infer<typeof releaseHoldManuallyOutput>> {
  const { correlationId, now: at } = ctx;
  assertMayChangeStatusManually(ctx.actor);
  const input = parseInput(releaseHoldManuallyInput, given);
  const { reason } = input;
  const object = await lockVisiblePropertyObject(tx, ctx.actor, input.propertyObjectId);
  if (!isHeld(object.status)) {
    throw new AppError(PROPERTY_OBJECT_ERRORS.NOT_HELD, 'PRECONDITION_FAILED', `property object is ${object.status}, not Reserved or Booked`, { status: object.status });
  }
  const from = stateOf(object);
  const to = release(from, 'Manual', at);
  const { messageId } = await persistStatusTransition(tx, {
    object, from, to, correlationId, actorId: ctx.actor.userId, reason, dealId: from.holdDealId, bookingId: from.holdBookingId,
  });
  const timer = from.status === 'Reserved' ? from.reservedUntil : from.bookedUntil;
  await tx.insert(holdReleases).values({
    propertyObjectId: object.id, tenantId: object.tenantId, projectId: object.projectId, holdDealId: from.holdDealId, fromStatus: from.status,
    expiredTimerAt: timer, overdueByMs: timer ? at.getTime() - timer.getTime() : null, statusSource: 'Manual',
    actorId: ctx.actor.userId, reason, messageId, releasedAt: at,
  });
  if (from.holdBookingId && from.holdDealId) {
    await recordCrmBookingVersion(tx, { bookingId: from.holdBookingId, propertyObjectId: object.id, dealId: from.holdDealId, version: null, released: true, at });
  }
  await writeAudit(tx, {
    actor: ctx.actor, action: 'chessboard.release-hold', targetType: 'PropertyObject', targetId: object.id, reason, at,
    details: { fromStatus: from.status, holdDealId: from.holdDealId, holdBookingId: from.holdBookingId, timer: timer?.toISOString() ?? null, messageId, version: to.version, correlationId },
  });
  return { propertyObjectId: object.id, fromStatus: from.status, toStatus: to.status, version: to.version, messageId };
}
