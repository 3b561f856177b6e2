/**
 * DealEntity's part in the Booking saga (DESIGN decision 5). Pure: the commands persist what these
 * return. The deal status is a projection of its bookings:
 *   booking created            Application → Booking
 *   booking expired/cancelled  Booking → Application (when no other booking of the deal is active)
 *   StartSale                  Booking → Sale, in the booking's Completed transaction (INV-BKG-7)
 *   Deal.Cancel                Draft/Application/Booking → Cancelled (cascades to its active bookings)
 */
import type { DEAL_STATUSES, deals } from './schema';
import { crmError } from './errors';

export type DealStatus = (typeof DEAL_STATUSES)[number];
export type DealRecord = typeof deals.$inferSelect;

/** INV-BKG-2: the developer is engaged (Application or later) and the deal is still open. */
export const ENGAGED_DEAL_STATUSES: readonly DealStatus[] = ['Application', 'Booking'];

export interface DealChange {
  from: DealStatus;
  to: DealStatus;
}

/** Deal.OnBookingCreated: Application → Booking; a deal already in Booking stays there. */
export function onBookingCreated(deal: Pick<DealRecord, 'status'>): DealChange | null {
  return deal.status === 'Application' ? { from: 'Application', to: 'Booking' } : null;
}

/** Expiry or cancel of a booking moves the deal back to Application unless another booking of it is still active. */
export function onBookingReleased(deal: Pick<DealRecord, 'status'>, otherActiveBookings: number): DealChange | null {
  return deal.status === 'Booking' && otherActiveBookings === 0 ? { from: 'Booking', to: 'Application' } : null;
}

/** Deal.StartSale: Booking → Sale (INV-BKG-7, together with the booking's Booked → Completed). */
export function startSale(deal: Pick<DealRecord, 'id' | 'status'>): DealChange {
  if (deal.status !== 'Booking') {
    throw crmError('CRM_DEAL_INVALID_TRANSITION', `A ${deal.status} deal cannot start a sale`, { dealId: deal.id, status: deal.status });
  }
  return { from: 'Booking', to: 'Sale' };
}

/** Deal.Cancel: an open deal becomes Cancelled; Sale and Cancelled are final. */
export function cancelDeal(deal: Pick<DealRecord, 'id' | 'status'>): DealChange {
  if (deal.status === 'Sale' || deal.status === 'Cancelled') {
    throw crmError('CRM_DEAL_INVALID_TRANSITION', `A ${deal.status} deal cannot be cancelled`, { dealId: deal.id, status: deal.status });
  }
  return { from: deal.status, to: 'Cancelled' };
}
