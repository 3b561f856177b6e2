import { createHash } from 'node:crypto';
import { crmContracts, CRM_EVENT_TYPES, type CrmTopic } from '../server/contracts/crm';
import type { AnyEnvelope } from '../server/contracts/envelope';
import { notificationsBookingEventsConsumer } from '../server/notifications/booking-events.consumer';
import type { ConsumerDefinition } from '../server/platform/kafka/consumer-runner';
import { rewardsBookingEventsConsumer } from '../server/rewards/booking-events.consumer';
import { createDatabase } from '../server/platform/db';
import { parseEnv, type Env } from '../server/main/env';
import { replayThroughConsumer } from '../server/platform/kafka/replay';
import { TOPICS } from '../server/platform/kafka/topics';
import { createLogger } from '../server/platform/logger';

type Row = Record<string, unknown>;

/** What the seeded bookings' events said beyond the booking row: the deal's agent and investor, the programme's reward. */
export interface EventExtras {
  agentId: string;
  investorId: string | null;
  reward: { kind: 'percent' | 'fixed'; value: number; price: number | null; amount: number } | null;
}

/** A deterministic uuid from a name (the seed is deterministic). */
function uuidFor(name: string): string {
  const h = createHash('sha256').update(`seed-notifications:${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const iso = (d: unknown) => (d as Date).toISOString();

/**
 * The crm events the seeded bookings' history stands for (created, confirmed, paid, expired,
 * cancelled, sale started), in version order, as crm's producer builds them.
 */
export function seededCrmEvents(bookings: Row[], extras: ReadonlyMap<string, EventExtras> = new Map()): { topic: CrmTopic; envelope: AnyEnvelope }[] {
  const out: { topic: CrmTopic; envelope: AnyEnvelope }[] = [];
  for (const b of bookings) {
    const extra = extras.get(b.id as string);
    const base = {
      bookingId: b.id as string, dealId: b.deal_id as string, propertyObjectId: b.property_object_id as string,
      tenantId: b.tenant_id as string, createdBy: (b.created_by as string | null) ?? null,
    };
    const push = (topic: CrmTopic, at: Date, payload: Record<string, unknown>, aggregate: 'Booking' | 'Deal' = 'Booking') => {
      const envelope = crmContracts[topic].parse({
        messageId: uuidFor(`${base.bookingId}:${topic}`), type: CRM_EVENT_TYPES[topic], contractVersion: 1, aggregateType: aggregate,
        aggregateId: aggregate === 'Booking' ? base.bookingId : base.dealId, occurredAt: at.toISOString(), tenantId: base.tenantId,
        correlationId: uuidFor(`${base.bookingId}:correlation`), causationId: null, payload,
      }) as AnyEnvelope;
      out.push({ topic, envelope });
    };
    const status = b.status as string;
    const createdAt = b.created_at as Date;
    push(TOPICS.bookingCreated, createdAt, {
      ...base, bookingVersion: 1, programId: b.program_id, status: 'Reserved', reserveExpiresAt: iso(b.reserve_expires_at), createdAt: iso(createdAt),
      agentId: extra?.agentId ?? null, investorId: extra?.investorId ?? null,
    });
    const booked = b.booked_at as Date | null;
    if (booked && b.booking_expires_at) {
      push(TOPICS.bookingConfirmed, booked, { ...base, bookingVersion: 2, status: 'Booked', bookedAt: iso(booked), bookingExpiresAt: iso(b.booking_expires_at) });
      if (b.payment_status === 'Paid') push(TOPICS.bookingPaid, booked, { ...base, bookingVersion: 2, paidAt: iso(booked), agentId: extra?.agentId ?? null, reward: extra?.reward ?? null });
    }
    const closedAt = (b.closed_at as Date | null) ?? createdAt;
    const version = b.version as number;
    if (status === 'ReserveExpired' || status === 'BookingExpired') {
      const phase = status === 'ReserveExpired' ? 'Reserve' : 'Booking';
      push(TOPICS.bookingExpired, closedAt, { ...base, bookingVersion: version, phase, status, expiredAt: iso(closedAt), deadline: iso(phase === 'Reserve' ? b.reserve_expires_at : b.booking_expires_at) });
    } else if (status === 'Cancelled') {
      push(TOPICS.bookingCancelled, closedAt, { ...base, bookingVersion: version, fromStatus: 'Reserved', reason: String(b.closed_reason ?? 'cancelled'), cancelledAt: iso(closedAt) });
    } else if (status === 'Completed') {
      push(TOPICS.dealSaleStarted, closedAt, { ...base, bookingVersion: version, startedAt: iso(closedAt) }, 'Deal');
    }
  }
  return out;
}

/**
 * The env a consumer's handler is given in the seed's replays. The seed talks to no broker, and
 * `npm start` / the e2e run start Kafka in process without putting KAFKA_BROKERS into process.env (a
 * fresh clone failed here), so a placeholder satisfies the parse.
 */
export function seedEnv(url: string): Env {
  return parseEnv({ ...process.env, DATABASE_URL: url, KAFKA_BROKERS: process.env.KAFKA_BROKERS || 'not-used-by-the-seed:9092' });
}

/**
 * Notifications of the demo deals, made by running notifications' consumer over the seeded bookings'
 * events (each in a transaction with its inbox row, as the runner does), not written by hand. Returns
 * the events applied or found a no-op (not seen before).
 */
export async function seedNotifications(url: string, bookings: Row[], extras?: ReadonlyMap<string, EventExtras>): Promise<number> {
  return replaySeeded(url, notificationsBookingEventsConsumer, seededCrmEvents(bookings, extras));
}

/**
 * The rewards of the seeded paid bookings, made by rewards' consumer over the same events (one accrual
 * per paid booking, in the state its later events leave it), not written by hand.
 */
export async function seedRewards(url: string, bookings: Row[], extras: ReadonlyMap<string, EventExtras>): Promise<number> {
  return replaySeeded(url, rewardsBookingEventsConsumer, seededCrmEvents(bookings, extras).filter((e) => rewardsBookingEventsConsumer.topics.includes(e.topic)));
}

async function replaySeeded(url: string, consumer: ConsumerDefinition, events: { topic: CrmTopic; envelope: AnyEnvelope }[]): Promise<number> {
  const database = createDatabase(url, { max: 2, applicationName: 'pin-seed' });
  try {
    const counts = await replayThroughConsumer(database, consumer, events, {
      logger: createLogger('seed', { level: 'warn' }), env: seedEnv(url), rejections: 'throw',
    });
    return counts.applied + counts.noOp;
  } finally {
    await database.close();
  }
}
