import { isAppError } from '../platform/errors';
import { counter, gauge, histogram } from '../platform/metrics';
import type { BookingRecord } from './booking';
import type { CancelDealResult } from './commands/cancel-deal';
import type { CrmCommandName } from './permissions';
import { USER_ROLES } from '../auth/actor';
import type { Actor } from '../auth/actor';
import type { CommandContext } from '../platform/command-context';

/** Saga metrics of crm (crm-booking-saga, Observability). */
export const expirationItemsTotal = counter('crm_booking_expiration_items_total', 'Bookings expired by booking-expiration, by phase (reserve | booking)', ['phase'], { phase: ['reserve', 'booking'] });
export const cancelTotal = counter('crm_booking_cancel_total', 'Booking cancellations by result (success | deal_cancelled | error code)', ['result'], { result: ['success', 'deal_cancelled'] });
export const createdTotal = counter('crm_bookings_created_total', 'Bookings created, by the role that initiated them', ['initiated_by'], { initiated_by: USER_ROLES });
export const confirmTotal = counter('crm_booking_confirm_total', 'Booking confirmations (free and paid) by result (success | error code)', ['result'], { result: ['success'] });
export const stuckInReserved = gauge(
  'crm_bookings_stuck_in_reserved',
  'Reserved/AwaitingPayment bookings past ReserveExpiresAt that the last booking-expiration cycle left behind',
);
export const sagaPhaseDuration = histogram(
  'crm_booking_saga_phase_duration_seconds',
  'Time in a saga phase: reserve = Reserved → Booked, booking = Booked → Completed, saga = Reserved → Completed',
  ['phase'],
  [60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 48 * 3600, 7 * 24 * 3600, 30 * 24 * 3600],
);

const seconds = (from: Date | null, to: Date | null) => (from && to ? Math.max(0, (to.getTime() - from.getTime()) / 1000) : null);
const resultOf = (e: unknown) => (isAppError(e) ? e.code : 'error');

/** Called once after a command's transaction committed (never for an idempotent replay). */
export function recordCommandSuccess(command: CrmCommandName, ctx: CommandContext<Actor>, result: unknown): void {
  switch (command) {
    case 'booking.create':
      createdTotal.inc({ initiated_by: ctx.actor.role });
      break;
    case 'booking.confirm':
    case 'booking.confirmPayment': {
      confirmTotal.inc({ result: 'success' });
      const b = result as BookingRecord;
      const reserve = seconds(b.createdAt, b.bookedAt);
      if (reserve !== null) sagaPhaseDuration.observe({ phase: 'reserve' }, reserve);
      break;
    }
    case 'booking.startSale': {
      const b = result as BookingRecord;
      const booking = seconds(b.bookedAt, b.closedAt);
      const saga = seconds(b.createdAt, b.closedAt);
      if (booking !== null) sagaPhaseDuration.observe({ phase: 'booking' }, booking);
      if (saga !== null) sagaPhaseDuration.observe({ phase: 'saga' }, saga);
      break;
    }
    case 'booking.cancel':
      cancelTotal.inc({ result: 'success' });
      break;
    case 'deal.cancel': {
      const n = (result as CancelDealResult).cancelledBookings.length;
      if (n > 0) cancelTotal.inc({ result: 'deal_cancelled' }, n);
      break;
    }
    default:
      break;
  }
}

export function recordCommandFailure(command: CrmCommandName, error: unknown): void {
  if (command === 'booking.confirm' || command === 'booking.confirmPayment') confirmTotal.inc({ result: resultOf(error) });
  if (command === 'booking.cancel') cancelTotal.inc({ result: resultOf(error) });
}
