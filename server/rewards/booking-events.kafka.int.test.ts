import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHeaders } from '../platform/kafka/client';
import { dlqTopic, TOPICS, withPrefix } from '../platform/kafka/topics';
import { writeOutbox } from '../platform/outbox/write';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { readTopics, startBrokerPipeline, type BrokerPipeline } from '../../test/harness/kafka';
import { eventually } from '../../test/harness/saga-harness';
import { rewardsBookingEventsConsumer } from './booking-events.consumer';

/** rewards' consumer through the real broker: crm outbox → relay → Kafka → startConsumer → rewards.accruals. */

let t: TestContext;
let pipe: BrokerPipeline;

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  pipe = await startBrokerPipeline(t, 'crm', rewardsBookingEventsConsumer);
}, 120_000);

afterAll(async () => {
  await pipe?.close();
  await t?.close();
});

const inbox = async (messageId: string) => (await t.database.sql<{ result: string; detail: string | null }[]>`
  SELECT result, detail FROM rewards.inbox WHERE consumer = ${rewardsBookingEventsConsumer.name} AND message_id = ${messageId}`)[0];
const processed = (messageId: string) => eventually(() => inbox(messageId), 'inbox row of ' + messageId, 60_000);
const accrualsOf = (bookingId: string) => t.database.sql<{ status: string; amount: string; agent_id: string | null; message_id: string; void_reason: string | null }[]>`
  SELECT status, amount::text, agent_id, message_id, void_reason FROM rewards.accruals WHERE booking_id = ${bookingId}`;
const iso = (ms = 0) => new Date(Date.now() + ms).toISOString();

function booking(tenantId = randomUUID()) {
  const base = { bookingId: randomUUID(), dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId, createdBy: randomUUID() };
  const agentId = randomUUID();
  return {
    ...base, agentId,
    paid: (reward: { kind: 'percent' | 'fixed'; value: number; price: number | null; amount: number } | null = { kind: 'percent', value: 2, price: 10_000_000, amount: 200_000 }) =>
      ({ ...base, bookingVersion: 4, paidAt: iso(), agentId, reward }),
    cancelled: (fromStatus: 'Reserved' | 'Booked' = 'Booked') => ({ ...base, bookingVersion: 5, fromStatus, reason: 'client changed mind', cancelledAt: iso() }),
    expired: () => ({ ...base, bookingVersion: 5, phase: 'Booking' as const, status: 'BookingExpired' as const, expiredAt: iso(), deadline: iso(-1000) }),
    saleStarted: () => ({ dealId: base.dealId, tenantId, bookingId: base.bookingId, propertyObjectId: base.propertyObjectId, bookingVersion: 5, createdBy: base.createdBy, startedAt: iso() }),
  };
}

/** Sends the outbox row of `messageId` to its topic once more, byte for byte as the relay did: a duplicate delivery. */
async function sendAgain(messageId: string): Promise<void> {
  const [row] = await t.database.sql<{ topic: string; key: string; payload: unknown; headers: Record<string, unknown> }[]>`
    SELECT topic, key, payload, headers FROM crm.outbox WHERE message_id = ${messageId}`;
  await pipe.producer.send({
    topic: withPrefix(t.prefix, row!.topic),
    messages: [{ key: row!.key, value: JSON.stringify(row!.payload), headers: toHeaders({ ...row!.headers, messageId }) }],
  });
}

describe('rewards consumer through the real broker', () => {
  it('booking-paid → one accrual with the programme\'s amount for the deal\'s agent; a duplicate send adds nothing', async () => {
    const b = booking();
    const paid = await pipe.publishCrm(TOPICS.bookingPaid, b.paid());
    expect(await processed(paid)).toEqual({ result: 'applied', detail: null });
    await sendAgain(paid);
    // a booking-paid re-published by crm (a new MessageId, the same booking): one accrual per booking
    const republished = await pipe.publishCrm(TOPICS.bookingPaid, b.paid({ kind: 'fixed', value: 1, price: null, amount: 1 }));
    expect(await processed(republished)).toEqual({ result: 'no-op', detail: 'the booking already has its accrual' });
    const rows = await accrualsOf(b.bookingId);
    expect(rows).toEqual([{ status: 'accrued', amount: '200000.00', agent_id: b.agentId, message_id: paid, void_reason: null }]);
    // the duplicate delivery was dropped by the inbox (one row for the message), never applied twice
    const [{ n }] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rewards.inbox WHERE message_id = ${paid}`;
    expect(n).toBe(1);
  }, 90_000);

  it('cancel after payment voids the accrual; an expiry of the booking voids it too', async () => {
    const b = booking();
    await processed(await pipe.publishCrm(TOPICS.bookingPaid, b.paid()));
    expect(await processed(await pipe.publishCrm(TOPICS.bookingCancelled, b.cancelled()))).toEqual({ result: 'applied', detail: null });
    expect((await accrualsOf(b.bookingId)).map((r) => [r.status, r.void_reason])).toEqual([['void', 'cancelled']]);

    const e = booking();
    await processed(await pipe.publishCrm(TOPICS.bookingPaid, e.paid()));
    await processed(await pipe.publishCrm(TOPICS.bookingExpired, e.expired()));
    expect((await accrualsOf(e.bookingId)).map((r) => [r.status, r.void_reason])).toEqual([['void', 'expired']]);
  }, 90_000);

  it('sale started makes it payable, and a later cancel cannot void a payable reward', async () => {
    const b = booking();
    await processed(await pipe.publishCrm(TOPICS.bookingPaid, b.paid()));
    await processed(await pipe.publishCrm(TOPICS.dealSaleStarted, b.saleStarted()));
    expect((await accrualsOf(b.bookingId)).map((r) => r.status)).toEqual(['payable']);
    await processed(await pipe.publishCrm(TOPICS.bookingCancelled, b.cancelled()));
    expect((await accrualsOf(b.bookingId)).map((r) => r.status)).toEqual(['payable']);
  }, 90_000);

  it('an ending that overtakes booking-paid (another topic) is remembered: the late accrual starts void', async () => {
    const b = booking();
    await processed(await pipe.publishCrm(TOPICS.bookingCancelled, b.cancelled()));
    await processed(await pipe.publishCrm(TOPICS.bookingPaid, b.paid()));
    expect((await accrualsOf(b.bookingId)).map((r) => [r.status, r.void_reason])).toEqual([['void', 'cancelled']]);
    // a cancel before Booked concerns no payment: nothing is remembered for it
    const early = booking();
    expect(await processed(await pipe.publishCrm(TOPICS.bookingCancelled, early.cancelled('Reserved')))).toEqual({ result: 'no-op', detail: 'cancelled from Reserved: never paid' });
    const [{ n }] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rewards.booking_endings WHERE booking_id = ${early.bookingId}`;
    expect(n).toBe(0);
  }, 90_000);

  it('a payload whose tenant differs from the envelope\'s goes to rewards.booking-events.dlq and writes nothing', async () => {
    const foreign = booking();
    const poison = await t.database.db.transaction((tx) => writeOutbox(tx, 'crm', {
      topic: TOPICS.bookingPaid, aggregateType: 'Booking', aggregateId: foreign.bookingId, tenantId: randomUUID(), payload: foreign.paid(), correlationId: randomUUID(),
    }));
    await pipe.relay.drain();
    expect(await processed(poison)).toEqual({ result: 'rejected', detail: 'REWARDS_TENANT_MISMATCH' });
    expect(await accrualsOf(foreign.bookingId)).toEqual([]);
    const dlq = await readTopics(pipe.kafka, [withPrefix(t.prefix, dlqTopic(rewardsBookingEventsConsumer.name))], (all) => all.length >= 1, 30_000);
    expect(dlq.map((m) => m.headers['dlq.error.code'])).toEqual(['REWARDS_TENANT_MISMATCH']);
  }, 90_000);

  it('replay from offset 0 (inbox forgotten) leaves one accrual per paid booking, unchanged', async () => {
    const b = booking();
    await processed(await pipe.publishCrm(TOPICS.bookingPaid, b.paid()));
    const snapshot = await t.database.sql`SELECT id, booking_id, status, amount, message_id FROM rewards.accruals ORDER BY id`;

    await pipe.stop();
    const admin = pipe.kafka.admin();
    await admin.connect();
    const group = withPrefix(t.prefix, rewardsBookingEventsConsumer.name);
    for (const topic of rewardsBookingEventsConsumer.topics) await admin.resetOffsets({ groupId: group, topic: withPrefix(t.prefix, topic), earliest: true });
    // the inbox forgotten too: the unique booking_id alone keeps the replay from adding anything
    await t.database.sql`DELETE FROM rewards.inbox`;
    await pipe.start();
    const ends = async () => {
      let lag = 0;
      for (const topic of rewardsBookingEventsConsumer.topics) {
        const full = withPrefix(t.prefix, topic);
        const high = await admin.fetchTopicOffsets(full);
        const [committed] = await admin.fetchOffsets({ groupId: group, topics: [full] });
        for (const p of high) lag += Number(p.high) - Math.max(0, Number(committed!.partitions.find((c) => c.partition === p.partition)?.offset ?? 0));
      }
      return lag === 0;
    };
    await eventually(ends, 'the replay consumed everything', 60_000, 250);
    await admin.disconnect();
    expect(await t.database.sql`SELECT id, booking_id, status, amount, message_id FROM rewards.accruals ORDER BY id`).toEqual(snapshot);
    const [{ n }] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rewards.inbox WHERE result = 'no-op'`;
    expect(n).toBeGreaterThan(0);
  }, 120_000);
});
