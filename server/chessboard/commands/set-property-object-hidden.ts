import type { Tx } from '../../platform/db';
import type { Actor } from '../../auth/actor';
import { setHidden, stateOf } from '../property-object';
import {
  assertMayChangeStatusManually, assertVisible, metaOf, notFound, requiredReason, writeAudit, type CommandMeta,
} from './command-support';
import { lockPropertyObject, persistStatusTransition } from './property-object-persistence';

export interface SetPropertyObjectHiddenInput extends CommandMeta {
  propertyObjectId: string;
  hidden: boolean;
  reason: string;
  actor: Actor;
}

/**
 * Manual hide / show (INV-CHS-001: Manual may move Free ↔ Hidden; a held or sold object is refused
 * with CHESSBOARD_PROPERTY_OBJECT_TRANSITION_NOT_ALLOWED). Already in the asked state: no change.
 */
export async function setPropertyObjectHidden(tx: Tx, input: SetPropertyObjectHiddenInput) {
  const { correlationId, at } = metaOf(input);
  assertMayChangeStatusManually(input.actor);
  const reason = requiredReason(input.reason);
  const object = await lockPropertyObject(tx, input.propertyObjectId);
  if (!object) throw notFound('PROPERTY_OBJECT', input.propertyObjectId);
  assertVisible(input.actor, object.tenantId, notFound('PROPERTY_OBJECT', input.propertyObjectId));
  if ((object.status === 'Hidden') === input.hidden) {
    return { propertyObjectId: object.id, changed: false, status: object.status, version: object.version, messageId: null };
  }
  const from = stateOf(object);
  const to = setHidden(from, input.hidden, at);
  const { messageId } = await persistStatusTransition(tx, { object, from, to, correlationId, actorId: input.actor.userId, reason });
  await writeAudit(tx, {
    actor: input.actor, action: input.hidden ? 'chessboard.hide-property-object' : 'chessboard.show-property-object',
    targetType: 'PropertyObject', targetId: object.id, reason, at, details: { fromStatus: from.status, toStatus: to.status, messageId, version: to.version },
  });
  return { propertyObjectId: object.id, changed: true, status: to.status, version: to.version, messageId };
}
