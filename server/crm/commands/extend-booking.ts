import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { ValidationError } from '../../platform/errors';
import { writeOutbox } from '../../platform/outbox/write';
import { extendBooking, type BookingRecord } from '../booking';
import { bookingExtendedEvent } from '../events';
import { bookingCommandInput } from './input';
import { lockBookingWithProgram } from './locking';
import { saveBooking } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingOutput } from './output';

/**
 * DESIGN decision 10: an extend moves a deadline by days, so a blind retry must not extend twice — the
 * caller says which version it extends (a stale one is a conflict) or gives an idempotency key (a retry
 * answers the first result).
 */
export const extendBookingInput = z.strictObject({ ...bookingCommandInput }).refine(
  (i) => i.expectedVersion !== undefined || i.idempotencyKey !== undefined,
  { message: 'expectedVersion or idempotencyKey is required', path: ['expectedVersion'] },
);
export type ExtendBookingInput = z.infer<typeof extendBookingInput>;
/** the booking after the command */
export const extendBookingOutput = bookingOutput;

/**
 * Booked → Booked (extend-booking, INV-BKG-6): BookingExpiresAt += BookingDurationHours. Publishes
 * booking-extended (DESIGN decision 1) so chessboard moves booked_until and its safety net does not
 * release an object crm still holds. At most the program's maxExtensions times (DESIGN decision 10).
 */
export async function extendBookingCommand(tx: Tx, input: ExtendBookingInput, ctx: CommandContext<Actor>): Promise<BookingRecord> {
  // callers inside the server (repairs, scenarios) bypass the router's schema: the same rule, the same answer
  if (input.expectedVersion === undefined && input.idempotencyKey === undefined) {
    throw new ValidationError('expectedVersion', 'expectedVersion or idempotencyKey is required');
  }
  return withIdempotency(tx, ctx, 'booking.extend', input, async () => {
    const { booking, program } = await lockBookingWithProgram(tx, ctx, input.bookingId, input.expectedVersion);
    const transition = extendBooking(booking, program, ctx.now);
    await saveBooking(tx, transition);
    const messageId = await writeOutbox(tx, 'crm', bookingExtendedEvent(transition.booking, booking.bookingExpiresAt, ctx));
    await writeTimeline(tx, ctx, transition, [messageId]);
    return transition.booking;
  });
}
