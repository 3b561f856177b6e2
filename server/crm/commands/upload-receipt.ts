import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { uploadReceipt, type BookingRecord } from '../booking';
import { bookingCommandInput, documentInput } from './input';
import { lockBooking } from './locking';
import { saveBooking } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import { type CommandContext } from './context';

export const uploadReceiptInput = z.strictObject({
  ...bookingCommandInput,
  /** a reference to the stored payment receipt */
  document: documentInput,
});
export type UploadReceiptInput = z.infer<typeof uploadReceiptInput>;

/** AwaitingPayment: the receipt is attached (PaymentStatus → ReceiptUploaded). Internal: timeline only. */
export async function uploadReceiptCommand(tx: Tx, input: UploadReceiptInput, ctx: CommandContext): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, 'booking.uploadReceipt', input, async () => {
    const booking = await lockBooking(tx, ctx, input.bookingId, input.expectedVersion);
    const transition = uploadReceipt(booking, input.document, ctx.now);
    await saveBooking(tx, transition);
    await writeTimeline(tx, ctx, transition, []);
    return transition.booking;
  });
}
