import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { writeOutbox } from '../../platform/outbox/write';
import { cancelBooking, type ActiveBookingStatus, type BookingRecord } from '../booking';
import { onBookingReleased } from '../deal';
import { crmError } from '../errors';
import { bookingCancelledEvent } from '../events';
import { bookingCommandInput, reasonInput } from './input';
import { lockBookingWithDeal } from './locking';
import { otherActiveBookings, saveBooking, saveDealStatus } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingOutput } from './output';

export const cancelBookingInput = z.strictObject({ ...bookingCommandInput, reason: reasonInput });
export type CancelBookingInput = z.infer<typeof cancelBookingInput>;
/** the booking after the command */
export const cancelBookingOutput = bookingOutput;

/**
 * Reserved/AwaitingPayment/Booked → Cancelled (cancel-booking; INV-BKG-8: terminal is immutable).
 * Compensation: booking-cancelled → chessboard releases the object; the deal goes back to Application.
 * An agent or an investor cancels only the bookings it created.
 */
export async function cancelBookingCommand(
  tx: Tx,
  input: CancelBookingInput,
  ctx: CommandContext<Actor>,
  /** 'booking.cancelInRepair': run by ops from a repair (manual release, reconciliation) */
  command: 'booking.cancel' | 'booking.cancelInRepair' = 'booking.cancel',
): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, command, input, async () => {
    const { booking, deal } = await lockBookingWithDeal(tx, ctx, input.bookingId, input.expectedVersion);
    if ((ctx.actor.role === 'agent' || ctx.actor.role === 'investor') && booking.createdBy !== ctx.actor.userId) {
      throw crmError('CRM_BOOKING_NOT_OWNER', 'An agent or an investor may cancel only the bookings it created', { bookingId: booking.id });
    }
    const transition = cancelBooking(booking, input.reason, ctx.now);
    await saveBooking(tx, transition);
    const dealChange = onBookingReleased(deal, await otherActiveBookings(tx, deal.id, booking.id));
    if (dealChange) await saveDealStatus(tx, deal.id, dealChange, ctx.now);
    const messageId = await writeOutbox(
      tx,
      'crm',
      bookingCancelledEvent(transition.booking, booking.status as ActiveBookingStatus, input.reason, ctx),
    );
    await writeTimeline(tx, ctx, transition, [messageId], input.reason);
    return transition.booking;
  });
}
