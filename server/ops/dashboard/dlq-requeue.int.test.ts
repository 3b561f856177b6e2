import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crmPropertyObjectStatusConsumer } from '../../chessboard/crm-property-object-status.consumer';
import { dealChatConsumer } from '../../messenger/deal-chat.consumer';
import { notificationsBookingEventsConsumer } from '../../notifications/booking-events.consumer';
import { createIdempotentProducer, createKafka } from '../../platform/kafka/client';
import { startConsumer, type RunningConsumer } from '../../platform/kafka/consumer-runner';
import { TOPICS, withPrefix } from '../../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { waitFor } from '../../../test/harness/kafka';
import { closeOpsKafka } from './kafka-admin';
import { actorOf, opsCaller } from '../../../test/fixtures/ops-dashboard.fixtures';

/**
 * Requeue through the real broker with the three real groups that read booking-created: the copy goes
 * to the group whose DLQ row was requeued, and when it fails there again the row comes back as the same
 * row with its attempts counted, not as a new row per group.
 */
let t: TestContext;
let producer: Producer;
const running: RunningConsumer[] = [];
const GROUPS = [crmPropertyObjectStatusConsumer, dealChatConsumer, notificationsBookingEventsConsumer];

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  const kafka = createKafka(t.env);
  producer = createIdempotentProducer(kafka);
  await producer.connect();
  for (const def of GROUPS) running.push(await startConsumer(def, { database: t.database, env: t.env, logger: t.logger, kafka }));
});
afterAll(async () => {
  await Promise.allSettled(running.map((r) => r.stop()));
  await producer?.disconnect();
  await closeOpsKafka();
  await t?.close();
});

describe('DLQ requeue', () => {
  it('re-delivers to the one group requeued; its next failure updates that row (attempts 2), the other groups get nothing', async () => {
    const key = randomUUID();
    await producer.send({ topic: withPrefix(t.prefix, TOPICS.bookingCreated), messages: [{ key, value: '{broken' }] });
    const c = opsCaller(t, actorOf('ops'));
    const rowsOf = async (includeDecided = false) => (await c.dlqMessages({ includeDecided })).rows.filter((r) => r.key === key);
    const first = await waitFor(async () => { const rows = await rowsOf(); return rows.length === GROUPS.length && rows; });
    expect(first.map((r) => r.attempts)).toEqual([1, 1, 1]);
    expect(first.map((r) => r.nextRetry)).toEqual(['manual', 'manual', 'manual']);

    const target = first.find((r) => r.consumerGroup === dealChatConsumer.name)!;
    await c.requeueDlq({ topic: target.topic, partition: target.partition, offset: target.offset, reason: 'consumer fixed' });
    // the deal-chat group refuses the broken copy again: its row is back, once, with the second attempt
    const again = await waitFor(async () => { const rows = await rowsOf(); const r = rows.find((x) => x.consumerGroup === dealChatConsumer.name); return r && r.attempts === 2 && rows; });
    expect(again).toHaveLength(GROUPS.length);
    const retried = again.find((r) => r.consumerGroup === dealChatConsumer.name)!;
    expect(retried).toMatchObject({ attempts: 2, decision: null, nextRetry: 'manual', firstSeenAt: target.firstSeenAt });
    expect(retried.offset).toBeGreaterThan(target.offset);
    // with the decided ones shown, the superseded record is not a second row of the same message
    expect((await rowsOf(true)).filter((r) => r.consumerGroup === dealChatConsumer.name)).toHaveLength(1);

    // once every group has read the copy, the other groups skipped it: their DLQ still holds one record each
    const m = await waitFor(async () => { const x = await c.messaging(); return GROUPS.every((g) => x.consumers!.find((cg) => cg.group === g.name)?.lag === 0) && x; });
    const sizes = m.dlq!;
    for (const g of GROUPS) expect(sizes.find((s) => s.group === g.name)!.size).toBe(1);
    expect((await rowsOf()).filter((r) => r.consumerGroup !== dealChatConsumer.name).map((r) => r.attempts)).toEqual([1, 1]);
  });
});
