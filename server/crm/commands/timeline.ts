import { preparedWrite, type Tx } from '../../platform/db';
import { bookingTimeline } from '../schema';
import type { BookingTransition } from '../booking';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

// built once, run prepared (platform/db.ts preparedWrite): one round trip, pipelined with the command's other writes
const insertTimeline = preparedWrite('crm_timeline_insert', bookingTimeline,
  ['bookingId', 'tenantId', 'at', 'actorType', 'actorId', 'action', 'fromStatus', 'toStatus', 'reason', 'correlationId', 'messageIds', 'bookingVersion'],
  (db, values) => db.insert(bookingTimeline).values(values));

/** One crm.booking_timeline row per transition: actor, from → to, reason, the message ids it published. */
export async function writeTimeline(
  tx: Tx,
  ctx: Pick<CommandContext<Actor>, 'actor' | 'correlationId' | 'now'>,
  transition: BookingTransition,
  messageIds: string[],
  reason: string | null = null,
  action: string = transition.action,
): Promise<void> {
  await insertTimeline(tx, {
    bookingId: transition.booking.id,
    tenantId: transition.booking.tenantId,
    at: ctx.now,
    actorType: ctx.actor.role === 'system' ? 'system' : 'user',
    actorId: ctx.actor.userId,
    action,
    fromStatus: transition.from,
    toStatus: transition.to,
    reason,
    correlationId: ctx.correlationId,
    messageIds,
    bookingVersion: transition.booking.version,
  });
}
