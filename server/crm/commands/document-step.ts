import type { Tx } from '../../platform/db';
import type { BookingRecord, BookingTransition } from '../booking';
import type { CrmCommandName } from '../permissions';
import { withIdempotency } from './idempotency';
import { lockBooking } from './locking';
import { saveBooking } from './persistence';
import { writeTimeline } from './timeline';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

/**
 * A document step of a booking (the contract, the payment receipt): the booking locked at the version
 * the caller saw, the step applied and saved, one timeline row. Both steps stay inside crm — the saga
 * table has no integration event for them — so no outbox message is written.
 */
export async function runDocumentStep(
  tx: Tx,
  ctx: CommandContext<Actor>,
  command: CrmCommandName,
  input: { bookingId: string; expectedVersion?: number; idempotencyKey?: string } & Record<string, unknown>,
  step: (booking: BookingRecord) => Promise<BookingTransition>,
): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, command, input, async () => {
    const booking = await lockBooking(tx, ctx, input.bookingId, input.expectedVersion);
    const transition = await step(booking);
    await saveBooking(tx, transition);
    await writeTimeline(tx, ctx, transition, []);
    return transition.booking;
  });
}
