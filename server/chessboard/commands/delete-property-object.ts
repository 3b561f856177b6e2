import { eq } from 'drizzle-orm';
import type { Tx } from '../../platform/db';
import type { Actor } from '../../auth/actor';
import { AppError } from '../../platform/errors';
import { TOPICS } from '../../platform/kafka/topics';
import { writeOutbox } from '../../platform/outbox/write';
import { isHeld, PROPERTY_OBJECT_ERRORS } from '../property-object';
import { propertyObjects } from '../schema';
import { assertVisible, metaOf, notFound, type CommandMeta } from './command-support';
import { lockPropertyObject, requestProjectAggregatesRecalc } from './property-object-persistence';

export interface DeletePropertyObjectInput extends CommandMeta {
  propertyObjectId: string;
  actor?: Actor;
}

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
export async function deletePropertyObject(tx: Tx, input: DeletePropertyObjectInput) {
  const { correlationId, at } = metaOf(input);
  const object = await lockPropertyObject(tx, input.propertyObjectId);
  if (!object) throw notFound('PROPERTY_OBJECT', input.propertyObjectId);
  assertVisible(input.actor, object.tenantId, notFound('PROPERTY_OBJECT', input.propertyObjectId));
  if (isHeld(object.status)) {
    throw new AppError(PROPERTY_OBJECT_ERRORS.HELD, 'CONFLICT', `property object is ${object.status}: release the hold first`, { status: object.status, holdDealId: object.holdDealId });
  }
  await tx.delete(propertyObjects).where(eq(propertyObjects.id, object.id));
  const messageId = await publishPropertyObjectDeleted(tx, object, at, correlationId);
  await requestProjectAggregatesRecalc(tx, [object.projectId], at);
  return { propertyObjectId: object.id, messageId };
}
