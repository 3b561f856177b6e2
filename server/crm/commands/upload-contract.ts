import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { uploadContract, type BookingRecord } from '../booking';
import { assertRequisitesUsable, bookingCommandInput, requisitesInput, documentInput } from './input';
import { lockBooking } from './locking';
import { saveBooking } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import { type CommandContext } from './context';

export const uploadContractInput = z.strictObject({
  ...bookingCommandInput,
  /** a reference to the stored contract document (file id / URL), not the file itself */
  document: documentInput,
  /** the buyer's requisite set, if the booking was created without one (a paid booking needs it now) */
  requisites: requisitesInput.optional(),
});
export type UploadContractInput = z.infer<typeof uploadContractInput>;

/** Reserved → AwaitingPayment (paid program). Internal: a timeline row, no integration event (saga table). */
export async function uploadContractCommand(tx: Tx, input: UploadContractInput, ctx: CommandContext): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, 'booking.uploadContract', input, async () => {
    const booking = await lockBooking(tx, ctx, input.bookingId, input.expectedVersion);
    if (input.requisites) await assertRequisitesUsable(tx, booking.tenantId, input.requisites);
    const transition = uploadContract(booking, input.document, ctx.now, input.requisites);
    await saveBooking(tx, transition);
    await writeTimeline(tx, ctx, transition, []);
    return transition.booking;
  });
}
