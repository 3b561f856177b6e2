import type { CrmPayload } from '../contracts/crm';
import { TOPICS } from '../platform/kafka/topics';
import type { CardType } from './schema';

/** The crm topics the deal chat consumes (every booking and deal transition the spec names). */
export const MESSENGER_CONSUMED_TOPICS = [
  TOPICS.bookingCreated,
  TOPICS.bookingConfirmed,
  TOPICS.bookingPaid,
  TOPICS.bookingExtended,
  TOPICS.bookingExpired,
  TOPICS.bookingCancelled,
  TOPICS.dealCancelled,
  TOPICS.dealSaleStarted,
] as const;
export type MessengerTopic = (typeof MESSENGER_CONSUMED_TOPICS)[number];

/**
 * What a card asks for: the commands the console offers on it — each only while the booking's current
 * state allows it and to a role that may run it (a new reserve: confirm; a booked hold: extend). The spec: reserve expired → "confirm the booking"; booking expired → "confirm or extend".
 */
export type CardAction = 'confirm' | 'extend';

/** A system card of the deal chat, decided from one crm event (pure; stored as type + data, rendered in the UI). */
export interface Card {
  tenantId: string;
  dealId: string;
  bookingId: string | null;
  agentId: string | null;
  /** the deal's investor, named by booking-created only (null otherwise) */
  investorId?: string | null;
  type: CardType;
  /** business key: one card per booking and type (per version for extensions) */
  key: string;
  data: Record<string, unknown> & { actions: CardAction[] };
}

/** The card an event becomes (every consumed event makes exactly one). */
export function cardOf(topic: MessengerTopic, payload: unknown): Card {
  switch (topic) {
    case TOPICS.bookingCreated: {
      const p = payload as CrmPayload<typeof TOPICS.bookingCreated>;
      return {
        ...ids(p), agentId: p.agentId ?? null, investorId: p.investorId ?? null, type: 'booking-created', key: `${p.bookingId}:booking-created`,
        data: { reserveExpiresAt: p.reserveExpiresAt, propertyObjectId: p.propertyObjectId, actions: ['confirm'] },
      };
    }
    case TOPICS.bookingConfirmed: {
      const p = payload as CrmPayload<typeof TOPICS.bookingConfirmed>;
      return { ...ids(p), agentId: null, type: 'booking-confirmed', key: `${p.bookingId}:booking-confirmed`, data: { bookingExpiresAt: p.bookingExpiresAt, actions: ['extend'] } };
    }
    case TOPICS.bookingPaid: {
      const p = payload as CrmPayload<typeof TOPICS.bookingPaid>;
      return { ...ids(p), agentId: null, type: 'booking-paid', key: `${p.bookingId}:booking-paid`, data: { paidAt: p.paidAt, actions: [] } };
    }
    case TOPICS.bookingExtended: {
      const p = payload as CrmPayload<typeof TOPICS.bookingExtended>;
      return {
        ...ids(p), agentId: null, type: 'booking-extended', key: `${p.bookingId}:booking-extended:${p.bookingVersion}`,
        data: { previousBookingExpiresAt: p.previousBookingExpiresAt, bookingExpiresAt: p.bookingExpiresAt, actions: ['extend'] },
      };
    }
    case TOPICS.bookingExpired: {
      const p = payload as CrmPayload<typeof TOPICS.bookingExpired>;
      // Reserve: "время резерва истекло, подтвердите бронь"; Booking: "подтвердите/продлите"
      const type: CardType = p.phase === 'Reserve' ? 'reserve-expired' : 'booking-expired';
      return {
        ...ids(p), agentId: null, type, key: `${p.bookingId}:${type}`,
        data: { deadline: p.deadline, expiredAt: p.expiredAt, actions: p.phase === 'Reserve' ? ['confirm'] : ['confirm', 'extend'] },
      };
    }
    case TOPICS.bookingCancelled: {
      const p = payload as CrmPayload<typeof TOPICS.bookingCancelled>;
      return { ...ids(p), agentId: null, type: 'booking-cancelled', key: `${p.bookingId}:booking-cancelled`, data: { reason: p.reason, fromStatus: p.fromStatus, actions: [] } };
    }
    case TOPICS.dealCancelled: {
      const p = payload as CrmPayload<typeof TOPICS.dealCancelled>;
      return {
        tenantId: p.tenantId, dealId: p.dealId, bookingId: p.bookingId, agentId: null, type: 'deal-cancelled', key: `${p.dealId}:deal-cancelled`,
        data: { reason: p.reason, actions: [] },
      };
    }
    case TOPICS.dealSaleStarted: {
      const p = payload as CrmPayload<typeof TOPICS.dealSaleStarted>;
      return { ...ids(p), agentId: null, type: 'sale-started', key: `${p.bookingId}:sale-started`, data: { startedAt: p.startedAt, actions: [] } };
    }
  }
}

const ids = (p: { tenantId: string; dealId: string; bookingId: string }) => ({ tenantId: p.tenantId, dealId: p.dealId, bookingId: p.bookingId });
