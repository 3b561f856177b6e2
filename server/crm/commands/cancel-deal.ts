import { and, asc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { writeOutbox } from '../../platform/outbox/write';
import { ACTIVE_STATUSES, cancelBooking, type BookingRecord } from '../booking';
import { cancelDeal, type DealRecord } from '../deal';
import { dealCancelledEvent } from '../events';
import { bookings } from '../schema';
import { idempotencyKeyInput, lockDeal, reasonInput, saveBooking, saveDealStatus, withIdempotency, writeTimeline, type CommandContext } from './shared';

export const cancelDealInput = z.strictObject({
  dealId: z.uuid(),
  reason: reasonInput,
  idempotencyKey: idempotencyKeyInput.optional(),
});
export type CancelDealInput = z.infer<typeof cancelDealInput>;

export interface CancelDealResult {
  deal: DealRecord;
  cancelledBookings: BookingRecord[];
}

/**
 * Deal.Cancel: the deal becomes Cancelled and its active booking is cancelled in the same transaction
 * (INV-BKG-8 compensation). The cascade travels as pin.crm.deal-cancelled.v1 naming the released
 * booking (chessboard releases its object); one deal-cancelled per released booking, or one with
 * bookingId null when the deal had no active booking.
 */
export async function cancelDealCommand(tx: Tx, input: CancelDealInput, ctx: CommandContext): Promise<CancelDealResult> {
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
      const messageId = await writeOutbox(tx, 'crm', dealCancelledEvent(deal, transition.booking, input.reason, ctx));
      await writeTimeline(tx, ctx, transition, [messageId], input.reason, 'dealCancel');
      cancelled.push(transition.booking);
    }
    if (active.length === 0) await writeOutbox(tx, 'crm', dealCancelledEvent(deal, null, input.reason, ctx));
    return { deal: { ...deal, status: change.to, version: deal.version + 1, updatedAt: ctx.now }, cancelledBookings: cancelled };
  });
}
