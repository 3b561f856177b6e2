import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { writeOutbox } from '../../platform/outbox/write';
import { confirmPayment, type BookingRecord } from '../booking';
import { bookingConfirmedEvent, bookingPaidEvent } from '../events';
import { bookingCommandInput } from './input';
import { lockBookingWithProgram } from './locking';
import { saveBooking } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import { type CommandContext } from './context';

export const confirmPaymentInput = z.strictObject({ ...bookingCommandInput });
export type ConfirmPaymentInput = z.infer<typeof confirmPaymentInput>;

/**
 * AwaitingPayment → Booked (confirm-booking-payment). INV-BKG-4: the receipt is uploaded and
 * PaymentStatus becomes Paid. The paid branch writes booking-paid and booking-confirmed in one commit.
 */
export async function confirmPaymentCommand(tx: Tx, input: ConfirmPaymentInput, ctx: CommandContext): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, 'booking.confirmPayment', input, async () => {
    const { booking, program } = await lockBookingWithProgram(tx, ctx, input.bookingId, input.expectedVersion);
    const transition = confirmPayment(booking, program, ctx.now);
    await saveBooking(tx, transition);
    const paid = await writeOutbox(tx, 'crm', bookingPaidEvent(transition.booking, ctx));
    const confirmed = await writeOutbox(tx, 'crm', bookingConfirmedEvent(transition.booking, ctx));
    await writeTimeline(tx, ctx, transition, [paid, confirmed]);
    return transition.booking;
  });
}
