import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { TOPICS } from '../../platform/kafka/topics';
import { writeOutbox } from '../../platform/outbox/write';
import { isHeld, PROPERTY_OBJECT_ERRORS } from '../property-object';
import { propertyObjects } from '../schema';
import { lockVisiblePropertyObject, parseInput } from './command-support';
import { requestProjectAggregatesRecalc } from '../property-object-persistence';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

export const deletePropertyObjectInput = z.object({ propertyObjectId: z.string() });
export type DeletePropertyObjectInput = z.input<typeof deletePropertyObjectInput>;

export async function publishPropertyObjectDeleted(tx: Tx, o: { id: string; tenantId: string; projectId: string }, at: Date, correlationId: string) {
  return writeOutbox(tx, 'chessboard', {
    topic: TOPICS.propertyObjectDeleted,
    aggregateType: 'PropertyObject',
    aggregateId: o.id,
    tenantId: o.tenantId,
    correlationId,
    occurredAt: at,
    payload: { propertyObjectId: o.id, tenantId: o.tenantId, projectId: o.projectId, deletedAt: at.toISOString() },
  });
}

/**
 * Deletes a property object (catalog delists its card on pin.chessboard.property-object-deleted.v1).
 * A held object (Reserved/Booked) is refused: its CRM booking still points at it.
 */
export async function deletePropertyObject(tx: Tx, given: DeletePropertyObjectInput, ctx: CommandContext<Actor>) {
  const { correlationId, now: at } = ctx;
  const input = parseInput(deletePropertyObjectInput, given);
  const object = await lockVisiblePropertyObject(tx, ctx.actor, input.propertyObjectId);
  if (isHeld(object.status)) {
    throw new AppError(PROPERTY_OBJECT_ERRORS.HELD, 'CONFLICT', `property object is ${object.status}: release the hold first`, { status: object.status, holdDealId: object.holdDealId });
  }
  await tx.delete(propertyObjects).where(eq(propertyObjects.id, object.id));
  const messageId = await publishPropertyObjectDeleted(tx, object, at, correlationId);
  await requestProjectAggregatesRecalc(tx, [object.projectId], at);
  return { propertyObjectId: object.id, messageId };
}
