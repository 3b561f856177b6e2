import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { writeOutbox } from '../../platform/outbox/write';
import { completeBooking, type BookingRecord } from '../booking';
import { startSale } from '../deal';
import { dealSaleStartedEvent } from '../events';
import { bookingCommandInput } from './input';
import { lockBookingWithDeal } from './locking';
import { saveBooking, saveDealStatus } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingOutput } from './output';

export const startSaleInput = z.strictObject({ ...bookingCommandInput });
export type StartSaleInput = z.infer<typeof startSaleInput>;
/** the booking after the command */
export const startSaleOutput = bookingOutput;

/**
 * Booked → Completed with the deal Booking → Sale in the same transaction (INV-BKG-7, Deal.StartSale).
 * Publishes deal-sale-started (DESIGN decision 2): chessboard marks the object Sold.
 */
export async function startSaleCommand(tx: Tx, input: StartSaleInput, ctx: CommandContext<Actor>): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, 'booking.startSale', input, async () => {
    const { booking, deal } = await lockBookingWithDeal(tx, ctx, input.bookingId, input.expectedVersion);
    const transition = completeBooking(booking, ctx.now);
    const dealChange = startSale(deal);
    await saveBooking(tx, transition);
    await saveDealStatus(tx, deal.id, dealChange, ctx.now);
    const messageId = await writeOutbox(tx, 'crm', dealSaleStartedEvent(transition.booking, ctx));
    await writeTimeline(tx, ctx, transition, [messageId]);
    return transition.booking;
  });
}
