import { and, asc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { writeOutbox } from '../../platform/outbox/write';
import { ACTIVE_STATUSES, cancelBooking, type ActiveBookingStatus, type BookingRecord } from '../booking';
import { cancelDeal } from '../deal';
import { bookingCancelledEvent, dealCancelledEvent } from '../events';
import { bookings } from '../schema';
import { idempotencyKeyInput, reasonInput } from './input';
import { lockDeal } from './locking';
import { saveBooking, saveDealStatus } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingOutput, dealOutput } from './output';

export const cancelDealInput = z.strictObject({
  dealId: z.uuid(),
  reason: reasonInput,
  idempotencyKey: idempotencyKeyInput.optional(),
});
export type CancelDealInput = z.infer<typeof cancelDealInput>;

/** the deal after the command and the bookings it ended with it */
export const cancelDealOutput = z.object({ deal: dealOutput, cancelledBookings: z.array(bookingOutput) });
export type CancelDealResult = z.infer<typeof cancelDealOutput>;

/**
 * Deal.Cancel: the deal becomes Cancelled and its active booking is cancelled in the same transaction
 * (INV-BKG-8 compensation). Every booking it ends publishes pin.crm.booking-cancelled.v1 (like a
 * cancel of that booking) and pin.crm.deal-cancelled.v1 naming it; one deal-cancelled with bookingId
 * null when the deal had no active booking.
 */
export async function cancelDealCommand(tx: Tx, input: CancelDealInput, ctx: CommandContext<Actor>): Promise<CancelDealResult> {
  return withIdempotency(tx, ctx, 'deal.cancel', input, async () => {
    const deal = await lockDeal(tx, ctx, input.dealId);
    const change = cancelDeal(deal);
    // deal is locked first, then its bookings (the lock order of every crm command)
    const active = await tx
      .select()
      .from(bookings)
      .where(and(eq(bookings.dealId, deal.id), inArray(bookings.status, [...ACTIVE_STATUSES])))
      .orderBy(asc(bookings.id))
      .for('update');
    await saveDealStatus(tx, deal.id, change, ctx.now);
    const cancelled: BookingRecord[] = [];
    for (const booking of active) {
      const transition = cancelBooking(booking, input.reason, ctx.now);
      await saveBooking(tx, transition);
      // every consumer of booking-cancelled (chessboard, notifications, the timeline) learns that this
      // booking ended; deal-cancelled names it too. Both carry the same bookingVersion, so chessboard
      // releases once and takes the second as a stale no-op (DESIGN decision 3).
      const cancelledId = await writeOutbox(tx, 'crm', bookingCancelledEvent(transition.booking, booking.status as ActiveBookingStatus, input.reason, ctx));
      const dealMessageId = await writeOutbox(tx, 'crm', dealCancelledEvent(deal, transition.booking, input.reason, ctx));
      await writeTimeline(tx, ctx, transition, [cancelledId, dealMessageId], input.reason, 'dealCancel');
      cancelled.push(transition.booking);
    }
    if (active.length === 0) await writeOutbox(tx, 'crm', dealCancelledEvent(deal, null, input.reason, ctx));
    return { deal: { ...deal, status: change.to, version: deal.version + 1, updatedAt: ctx.now }, cancelledBookings: cancelled };
  });
}
