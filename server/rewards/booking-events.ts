import { and, eq, sql } from 'drizzle-orm';
import type { CrmPayload } from '../contracts/crm';
import type { AnyEnvelope } from '../contracts/envelope';
import type { Tx } from '../platform/db';
import { TOPICS } from '../platform/kafka/topics';
import { accruals, bookingEndings, type AccrualStatus } from './schema';

/** What rewards consumes: booking-paid, and the later events that decide whether the reward is paid out. */
export const REWARD_TOPICS = [
  TOPICS.bookingPaid, TOPICS.bookingCancelled, TOPICS.bookingExpired, TOPICS.dealCancelled, TOPICS.dealSaleStarted,
] as const;
export type RewardTopic = (typeof REWARD_TOPICS)[number];

export type RewardEvent =
  | { kind: 'paid'; tenantId: string; p: CrmPayload<typeof TOPICS.bookingPaid> }
  | { kind: 'ending'; tenantId: string; bookingId: string; outcome: 'payable' | 'void'; reason: string; at: string }
  /** an event that cannot concern a paid booking (cancelled before Booked, a reserve expired, a deal without a booking) */
  | { kind: 'irrelevant'; tenantId: string; why: string };

/**
 * Pure: a validated crm payload → what it means to rewards. Only a Booked booking can have been paid
 * (the paid branch reaches Booked in the payment's commit), so a cancel from Reserved/AwaitingPayment
 * and a reserve's expiry concern no reward.
 */
export function toRewardEvent(topic: RewardTopic, payload: unknown): RewardEvent {
  switch (topic) {
    case TOPICS.bookingPaid: {
      const p = payload as CrmPayload<typeof TOPICS.bookingPaid>;
      return { kind: 'paid', tenantId: p.tenantId, p };
    }
    case TOPICS.bookingCancelled: {
      const p = payload as CrmPayload<typeof TOPICS.bookingCancelled>;
      if (p.fromStatus !== 'Booked') return { kind: 'irrelevant', tenantId: p.tenantId, why: `cancelled from ${p.fromStatus}: never paid` };
      return { kind: 'ending', tenantId: p.tenantId, bookingId: p.bookingId, outcome: 'void', reason: 'cancelled', at: p.cancelledAt };
    }
    case TOPICS.bookingExpired: {
      const p = payload as CrmPayload<typeof TOPICS.bookingExpired>;
      if (p.phase !== 'Booking') return { kind: 'irrelevant', tenantId: p.tenantId, why: 'reserve expired: never paid' };
      return { kind: 'ending', tenantId: p.tenantId, bookingId: p.bookingId, outcome: 'void', reason: 'expired', at: p.expiredAt };
    }
    case TOPICS.dealCancelled: {
      const p = payload as CrmPayload<typeof TOPICS.dealCancelled>;
      if (!p.bookingId) return { kind: 'irrelevant', tenantId: p.tenantId, why: 'deal cancelled without an active booking' };
      return { kind: 'ending', tenantId: p.tenantId, bookingId: p.bookingId, outcome: 'void', reason: 'deal-cancelled', at: p.cancelledAt };
    }
    case TOPICS.dealSaleStarted: {
      const p = payload as CrmPayload<typeof TOPICS.dealSaleStarted>;
      return { kind: 'ending', tenantId: p.tenantId, bookingId: p.bookingId, outcome: 'payable', reason: 'sale-started', at: p.startedAt };
    }
  }
}

/**
 * booking-paid → one accrual (booking_id and message_id unique: a duplicate or a replay inserts nothing).
 * If the booking's ending arrived first (another topic), the accrual starts in that state.
 */
export async function recordPayment(tx: Tx, envelope: AnyEnvelope, p: CrmPayload<typeof TOPICS.bookingPaid>): Promise<AccrualStatus | null> {
  const [ending] = await tx.select().from(bookingEndings).where(eq(bookingEndings.bookingId, p.bookingId));
  const status: AccrualStatus = ending ? (ending.outcome === 'payable' ? 'payable' : 'void') : 'accrued';
  const reward = p.reward ?? null;
  const inserted = await tx.insert(accruals).values({
    bookingId: p.bookingId, tenantId: p.tenantId, dealId: p.dealId, propertyObjectId: p.propertyObjectId, agentId: p.agentId ?? null,
    ruleKind: reward?.kind ?? null, ruleValue: reward?.value ?? null, price: reward?.price ?? null, amount: reward?.amount ?? 0,
    status, messageId: envelope.messageId, paidAt: new Date(p.paidAt),
    payableAt: status === 'payable' ? ending!.at : null,
    voidedAt: status === 'void' ? ending!.at : null,
    voidReason: status === 'void' ? ending!.reason : null,
  }).onConflictDoNothing().returning({ id: accruals.id });
  return inserted.length > 0 ? status : null;
}

/**
 * A booking's ending: accrued → payable (sale started) or → void (cancelled, expired, deal cancelled).
 * An accrual already payable or void stays (the first ending wins: a booking ends once). The ending is
 * also remembered for a booking-paid still on its way (cross-topic order, DESIGN decision 3).
 */
export async function recordEnding(tx: Tx, envelope: AnyEnvelope, e: Extract<RewardEvent, { kind: 'ending' }>): Promise<AccrualStatus | null> {
  const at = new Date(e.at);
  await tx.insert(bookingEndings).values({ bookingId: e.bookingId, tenantId: e.tenantId, outcome: e.outcome, reason: e.reason, at, messageId: envelope.messageId })
    .onConflictDoNothing();
  const moved = await tx.update(accruals)
    .set(e.outcome === 'payable'
      ? { status: 'payable', payableAt: at, updatedAt: sql`now()` }
      : { status: 'void', voidedAt: at, voidReason: e.reason, updatedAt: sql`now()` })
    .where(and(eq(accruals.bookingId, e.bookingId), eq(accruals.tenantId, e.tenantId), eq(accruals.status, 'accrued')))
    .returning({ id: accruals.id });
  return moved.length > 0 ? e.outcome : null;
}
