import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { uploadContract, type BookingRecord } from '../booking';
import { runDocumentStep } from './document-step';
import { assertRequisitesUsable, bookingCommandInput, requisitesInput, documentInput } from './input';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingOutput } from './output';

export const uploadContractInput = z.strictObject({
  ...bookingCommandInput,
  /** a reference to the stored contract document (file id / URL), not the file itself */
  document: documentInput,
  /** the buyer's requisite set, if the booking was created without one (a paid booking needs it now) */
  requisites: requisitesInput.optional(),
});
export type UploadContractInput = z.infer<typeof uploadContractInput>;
/** the booking after the command */
export const uploadContractOutput = bookingOutput;

/** Reserved → AwaitingPayment (paid program). Internal: a timeline row, no integration event (saga table). */
export async function uploadContractCommand(tx: Tx, input: UploadContractInput, ctx: CommandContext<Actor>): Promise<BookingRecord> {
  return runDocumentStep(tx, ctx, 'booking.uploadContract', input, async (booking) => {
    if (input.requisites) await assertRequisitesUsable(tx, ctx.actor, booking.tenantId, input.requisites);
    return uploadContract(booking, input.document, ctx.now, input.requisites);
  });
}
