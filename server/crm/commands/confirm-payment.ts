import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { preparedQuery, type Tx } from '../../platform/db';
import { rewardFor } from '../reward';
import { bookingPrograms, bookings, crmPropertyObjects, deals } from '../schema';
import { writeOutbox } from '../../platform/outbox/write';
import { confirmPayment, type BookingRecord } from '../booking';
import { bookingConfirmedEvent, bookingPaidEvent } from '../events';
import { bookingCommandInput } from './input';
import { lockBookingWithProgram } from './locking';
import { saveBooking } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingOutput } from './output';

/**
 * The reward rule of the booking's programme, the flat's price in crm's view and the deal's agent: one
 * statement through the booking's immutable references, read after the booking's lock is held.
 */
const rewardTermsOf = preparedQuery('crm_reward_terms', (db) => db
  .select({ kind: bookingPrograms.rewardKind, value: bookingPrograms.rewardValue, price: crmPropertyObjects.price, agentId: deals.agentId })
  .from(bookings)
  .innerJoin(bookingPrograms, eq(bookingPrograms.id, bookings.programId))
  .innerJoin(deals, eq(deals.id, bookings.dealId))
  .leftJoin(crmPropertyObjects, eq(crmPropertyObjects.id, bookings.propertyObjectId))
  .where(eq(bookings.id, sql.placeholder('bookingId'))));
const rewardTerms = async (tx: Tx, bookingId: string) => (await rewardTermsOf(tx, { bookingId }))[0];

export const confirmPaymentInput = z.strictObject({ ...bookingCommandInput });
export type ConfirmPaymentInput = z.infer<typeof confirmPaymentInput>;
/** the booking after the command */
export const confirmPaymentOutput = bookingOutput;

/**
 * AwaitingPayment → Booked (confirm-booking-payment). INV-BKG-4: the receipt is uploaded and
 * PaymentStatus becomes Paid. The paid branch writes booking-paid (with the programme's reward for the
 * deal's agent) and booking-confirmed in one commit.
 */
export async function confirmPaymentCommand(tx: Tx, input: ConfirmPaymentInput, ctx: CommandContext<Actor>): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, 'booking.confirmPayment', input, async () => {
    const { booking, program } = await lockBookingWithProgram(tx, ctx, input.bookingId, input.expectedVersion);
    const transition = confirmPayment(booking, program, ctx.now);
    await saveBooking(tx, transition);
    const terms = await rewardTerms(tx, booking.id);
    const reward = rewardFor({ kind: terms?.kind ?? null, value: terms?.value ?? null }, terms?.price ?? null);
    const paid = await writeOutbox(tx, 'crm', bookingPaidEvent(transition.booking, ctx, terms?.agentId ?? null, reward));
    const confirmed = await writeOutbox(tx, 'crm', bookingConfirmedEvent(transition.booking, ctx));
    await writeTimeline(tx, ctx, transition, [paid, confirmed]);
    return transition.booking;
  });
}
