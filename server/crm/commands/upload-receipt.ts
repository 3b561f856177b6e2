import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { uploadReceipt, type BookingRecord } from '../booking';
import { runDocumentStep } from './document-step';
import { bookingCommandInput, documentInput } from './input';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingOutput } from './output';

export const uploadReceiptInput = z.strictObject({
  ...bookingCommandInput,
  /** a reference to the stored payment receipt */
  document: documentInput,
});
export type UploadReceiptInput = z.infer<typeof uploadReceiptInput>;
/** the booking after the command */
export const uploadReceiptOutput = bookingOutput;

/** AwaitingPayment: the receipt is attached (PaymentStatus → ReceiptUploaded). Internal: timeline only. */
export async function uploadReceiptCommand(tx: Tx, input: UploadReceiptInput, ctx: CommandContext<Actor>): Promise<BookingRecord> {
  return runDocumentStep(tx, ctx, 'booking.uploadReceipt', input, async (booking) => uploadReceipt(booking, input.document, ctx.now));
}
