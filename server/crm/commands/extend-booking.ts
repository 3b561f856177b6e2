import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { writeOutbox } from '../../platform/outbox/write';
import { extendBooking, type BookingRecord } from '../booking';
import { bookingExtendedEvent } from '../events';
import { bookingCommandInput } from './input';
import { lockBookingWithProgram } from './locking';
import { saveBooking } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import { type CommandContext } from './context';

export const extendBookingInput = z.strictObject({ ...bookingCommandInput });
export type ExtendBookingInput = z.infer<typeof extendBookingInput>;

/**
 * Booked → Booked (extend-booking, INV-BKG-6): BookingExpiresAt += BookingDurationHours. Publishes
 * booking-extended (DESIGN decision 1) so chessboard moves booked_until and its safety net does not
 * release an object crm still holds.
 */
export async function extendBookingCommand(tx: Tx, input: ExtendBookingInput, ctx: CommandContext): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, 'booking.extend', input, async () => {
    const { booking, program } = await lockBookingWithProgram(tx, ctx, input.bookingId, input.expectedVersion);
    const transition = extendBooking(booking, program, ctx.now);
    await saveBooking(tx, transition);
    const messageId = await writeOutbox(tx, 'crm', bookingExtendedEvent(transition.booking, booking.bookingExpiresAt, ctx));
    await writeTimeline(tx, ctx, transition, [messageId]);
    return transition.booking;
  });
}
