import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { setHidden, stateOf } from '../property-object';
import {
  assertMayChangeStatusManually, lockVisiblePropertyObject, parseInput, reasonInput, writeAudit,
} from './command-support';
import { persistStatusTransition } from '../property-object-persistence';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

export const setPropertyObjectHiddenInput = z.object({ propertyObjectId: z.string(), hidden: z.boolean(), reason: reasonInput });
export type SetPropertyObjectHiddenInput = z.input<typeof setPropertyObjectHiddenInput>;

/**
 * Manual hide / show (INV-CHS-001: Manual may move Free ↔ Hidden; a held or sold object is refused
 * with CHESSBOARD_PROPERTY_OBJECT_TRANSITION_NOT_ALLOWED). Already in the asked state: no change.
 */
export async function setPropertyObjectHidden(tx: Tx, given: SetPropertyObjectHiddenInput, ctx: CommandContext<Actor>) {
  const { correlationId, now: at } = ctx;
  assertMayChangeStatusManually(ctx.actor);
  const input = parseInput(setPropertyObjectHiddenInput, given);
  const { reason } = input;
  const object = await lockVisiblePropertyObject(tx, ctx.actor, input.propertyObjectId);
  if ((object.status === 'Hidden') === input.hidden) {
    return { propertyObjectId: object.id, changed: false, status: object.status, version: object.version, messageId: null };
  }
  const from = stateOf(object);
  const to = setHidden(from, input.hidden, at);
  const { messageId } = await persistStatusTransition(tx, { object, from, to, correlationId, actorId: ctx.actor.userId, reason });
  await writeAudit(tx, {
    actor: ctx.actor, action: input.hidden ? 'chessboard.hide-property-object' : 'chessboard.show-property-object',
    targetType: 'PropertyObject', targetId: object.id, reason, at, details: { fromStatus: from.status, toStatus: to.status, messageId, version: to.version },
  });
  return { propertyObjectId: object.id, changed: true, status: to.status, version: to.version, messageId };
}
