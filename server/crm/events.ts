/**
 * The integration events of the Booking saga, built from a transition. Key = BookingId for booking
 * events and DealId for deal events (aggregateType 'Booking' / 'Deal'). Every payload carries
 * bookingVersion: the booking's version after the transition (DESIGN decision 3), so a consumer can
 * drop an event that arrives after a newer one from another topic.
 */
import { TOPICS } from '../platform/kafka/topics';
import type { Topic } from '../contracts';
import type { OutboxEvent } from '../platform/outbox/write';
import type { BookingRecord, ExpiryPhase } from './booking';
import type { BookingReward } from './reward';

type Meta = { correlationId: string; now: Date; causationId?: string | null };

const base = (b: BookingRecord) => ({
  bookingId: b.id,
  dealId: b.dealId,
  propertyObjectId: b.propertyObjectId,
  tenantId: b.tenantId,
  bookingVersion: b.version,
  createdBy: b.createdBy ?? null,
  bookingCreatedAt: b.createdAt.toISOString(),
});

function bookingEvent<T extends Topic>(topic: T, b: BookingRecord, meta: Meta, payload: OutboxEvent<T>['payload']): OutboxEvent<T> {
  return {
    topic,
    aggregateType: 'Booking',
    aggregateId: b.id,
    tenantId: b.tenantId,
    payload,
    correlationId: meta.correlationId,
    causationId: meta.causationId ?? null,
    occurredAt: meta.now,
  };
}

const iso = (d: Date | null): string => {
  if (!d) throw new Error('a timer required by the event is missing');
  return d.toISOString();
};

/**
 * `agentId` / `investorId`: the deal's agent and investor, for the deal chat's participants (messenger)
 * and the notices' recipients; null when the deal has none.
 */
export const bookingCreatedEvent = (b: BookingRecord, meta: Meta, agentId: string | null = null, investorId: string | null = null) =>
  bookingEvent(TOPICS.bookingCreated, b, meta, {
    ...base(b),
    programId: b.programId,
    // a reference only: personal data never leaves profile
    requisiteSetId: b.requisiteSetId ?? null,
    status: 'Reserved',
    reserveExpiresAt: iso(b.reserveExpiresAt),
    createdAt: iso(b.createdAt),
    agentId,
    investorId,
  });

export const bookingConfirmedEvent = (b: BookingRecord, meta: Meta) =>
  bookingEvent(TOPICS.bookingConfirmed, b, meta, {
    ...base(b),
    status: 'Booked',
    bookedAt: iso(b.bookedAt),
    bookingExpiresAt: iso(b.bookingExpiresAt),
  });

/** `reward`: what the programme's rule gives the deal's agent (`agentId`) for this payment (null: none). */
export const bookingPaidEvent = (b: BookingRecord, meta: Meta, agentId: string | null = null, reward: BookingReward | null = null) =>
  bookingEvent(TOPICS.bookingPaid, b, meta, { ...base(b), paidAt: meta.now.toISOString(), agentId, reward });

export const bookingExtendedEvent = (b: BookingRecord, previousBookingExpiresAt: Date | null, meta: Meta) =>
  bookingEvent(TOPICS.bookingExtended, b, meta, {
    ...base(b),
    previousBookingExpiresAt: iso(previousBookingExpiresAt),
    bookingExpiresAt: iso(b.bookingExpiresAt),
  });

export const bookingExpiredEvent = (b: BookingRecord, phase: ExpiryPhase, deadline: Date, meta: Meta) =>
  bookingEvent(TOPICS.bookingExpired, b, meta, {
    ...base(b),
    phase,
    status: phase === 'Reserve' ? 'ReserveExpired' : 'BookingExpired',
    expiredAt: meta.now.toISOString(),
    deadline: deadline.toISOString(),
  });

export const bookingCancelledEvent = (b: BookingRecord, fromStatus: 'Reserved' | 'AwaitingPayment' | 'Booked', reason: string, meta: Meta) =>
  bookingEvent(TOPICS.bookingCancelled, b, meta, { ...base(b), fromStatus, reason, cancelledAt: meta.now.toISOString() });

/** deal-cancelled names the booking it released (null when the deal had none active). */
export function dealCancelledEvent(
  deal: { id: string; tenantId: string },
  released: BookingRecord | null,
  reason: string,
  meta: Meta,
): OutboxEvent<typeof TOPICS.dealCancelled> {
  return {
    topic: TOPICS.dealCancelled,
    aggregateType: 'Deal',
    aggregateId: deal.id,
    tenantId: deal.tenantId,
    payload: {
      dealId: deal.id,
      tenantId: deal.tenantId,
      bookingId: released?.id ?? null,
      propertyObjectId: released?.propertyObjectId ?? null,
      bookingVersion: released?.version ?? null,
      createdBy: released?.createdBy ?? null,
      bookingCreatedAt: released?.createdAt.toISOString() ?? null,
      reason,
      cancelledAt: meta.now.toISOString(),
    },
    correlationId: meta.correlationId,
    causationId: meta.causationId ?? null,
    occurredAt: meta.now,
  };
}

export function dealSaleStartedEvent(b: BookingRecord, meta: Meta): OutboxEvent<typeof TOPICS.dealSaleStarted> {
  return {
    topic: TOPICS.dealSaleStarted,
    aggregateType: 'Deal',
    aggregateId: b.dealId,
    tenantId: b.tenantId,
    payload: {
      dealId: b.dealId,
      tenantId: b.tenantId,
      bookingId: b.id,
      propertyObjectId: b.propertyObjectId,
      bookingVersion: b.version,
      createdBy: b.createdBy ?? null,
      bookingCreatedAt: b.createdAt.toISOString(),
      startedAt: meta.now.toISOString(),
    },
    correlationId: meta.correlationId,
    causationId: meta.causationId ?? null,
    occurredAt: meta.now,
  };
}
