import type { ConsumerDefinition } from '../platform/kafka/consumer-runner';
import { RejectMessage } from '../platform/kafka/consumer-runner';
import { CONSUMER_GROUPS } from '../contracts/consumer-groups';
import { recordEnding, recordPayment, REWARD_TOPICS, toRewardEvent, type RewardTopic } from './booking-events';
import { accrualTransitions } from './metrics';

/**
 * Consumer `rewards.booking-events` (saga: "rewards: учёт факта оплаты брони (booking-paid),
 * идемпотентно по MessageId"): booking-paid records the deal agent's reward for the booking (one
 * accrual per booking); sale started makes it payable; a cancel, an expiry or the deal's cancellation
 * before the sale voids it. The runner owns the inbox (rewards.inbox: a message applied once), the
 * transaction, the DLQ (`rewards.booking-events.dlq`) and the offset; the accrual is also unique per
 * booking, so a replay from offset 0 or a re-published booking-paid adds nothing.
 */
export const rewardsBookingEventsConsumer: ConsumerDefinition = {
  name: CONSUMER_GROUPS.rewardsBookingEvents,
  inbox: 'rewards',
  topics: [...REWARD_TOPICS],
  async handle(tx, { topic, envelope }) {
    const event = toRewardEvent(topic as RewardTopic, envelope.payload);
    if (event.tenantId !== envelope.tenantId) {
      throw new RejectMessage('REWARDS_TENANT_MISMATCH', `payload tenant ${event.tenantId} differs from the envelope's ${envelope.tenantId}`);
    }
    if (event.kind === 'irrelevant') return { result: 'no-op', detail: event.why };
    const status = event.kind === 'paid' ? await recordPayment(tx, envelope, event.p) : await recordEnding(tx, envelope, event);
    if (status === null) {
      return { result: event.kind === 'paid' ? 'no-op' : 'applied', detail: event.kind === 'paid' ? 'the booking already has its accrual' : 'no accrued reward to move (remembered for a late payment)' };
    }
    accrualTransitions.inc({ status });
    return { result: 'applied' };
  },
};
