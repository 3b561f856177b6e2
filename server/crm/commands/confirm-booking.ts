import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { writeOutbox } from '../../platform/outbox/write';
import { confirmBooking, type BookingRecord } from '../booking';
import { bookingConfirmedEvent } from '../events';
import { bookingCommandInput } from './input';
import { lockBookingWithProgram } from './locking';
import { saveBooking } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingOutput } from './output';

export const confirmBookingInput = z.strictObject({ ...bookingCommandInput });
export type ConfirmBookingInput = z.infer<typeof confirmBookingInput>;
/** the booking after the command */
export const confirmBookingOutput = bookingOutput;

/**
 * Reserved → Booked (confirm-booking, free program; INV-BKG-3 now ≤ ReserveExpiresAt). The row lock
 * settles the race with booking-expiration: whichever commits first wins, the other sees the new
 * state, so exactly one of booking-confirmed / booking-expired is written.
 */
export async function confirmBookingCommand(tx: Tx, input: ConfirmBookingInput, ctx: CommandContext<Actor>): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, 'booking.confirm', input, async () => {
    const { booking, program } = await lockBookingWithProgram(tx, ctx, input.bookingId, input.expectedVersion);
    const transition = confirmBooking(booking, program, ctx.now);
    const messageId = randomUUID();
    // independent writes sent together (one round trip; see create-booking.ts); a version conflict of
    // the UPDATE rejects the whole transaction
    await Promise.all([
      saveBooking(tx, transition),
      writeOutbox(tx, 'crm', { ...bookingConfirmedEvent(transition.booking, ctx), messageId }),
      writeTimeline(tx, ctx, transition, [messageId]),
    ]);
    return transition.booking;
  });
}
