import type { Tx } from '../../platform/db';
import { bookingTimeline } from '../schema';
import type { BookingTransition } from '../booking';
import type { CommandContext } from './context';

/** One crm.booking_timeline row per transition: actor, from → to, reason, the message ids it published. */
export async function writeTimeline(
  tx: Tx,
  ctx: Pick<CommandContext, 'actor' | 'correlationId' | 'now'>,
  transition: BookingTransition,
  messageIds: string[],
  reason: string | null = null,
  action: string = transition.action,
): Promise<void> {
  await tx.insert(bookingTimeline).values({
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
  })
    // prepared (named): one round trip, pipelined with the command's other writes (platform/db.ts)
    .prepare('crm_timeline_insert')
    .execute();
}
