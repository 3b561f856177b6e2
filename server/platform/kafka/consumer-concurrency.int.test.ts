import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { waitFor } from '../../../test/harness/kafka';
import { createKafka, createIdempotentProducer } from './client';
import { PARTITIONS_CONSUMED_CONCURRENTLY, startConsumer, type ConsumerDefinition, type RunningConsumer } from './consumer-runner';
import { TOPICS, withPrefix } from './topics';

/**
 * The runner applies partitions concurrently (PARTITIONS_CONSUMED_CONCURRENTLY): a message that takes
 * long on one partition does not hold back the other partitions (one at a time, the consumer was
 * latency-bound below 100 messages/s — the bench's saga-latency case). Within a partition the order
 * stays the producer's.
 */
let t: TestContext;
let producer: Producer;
let running: RunningConsumer | undefined;
const applied: { partition: number; key: string; seq: number }[] = [];
const slowKey = randomUUID();
const fastKey = randomUUID();
const started = [0, 1].map(() => {
  let mark: () => void = () => {};
  const promise = new Promise<void>((resolve) => { mark = resolve; });
  return { mark, promise };
});

const def: ConsumerDefinition = {
  name: 'test.runner-concurrency',
  inbox: 'chessboard',
  topics: [TOPICS.bookingCreated],
  async handle(_tx, msg) {
    const p = msg.envelope.payload as { bookingId: string; bookingVersion: number };
    // the first message of each partition waits until the other partition has started: one partition
    // at a time, whichever went first would wait forever
    if (p.bookingVersion === 1000 || p.bookingVersion === 1) {
      const [mine, other] = msg.partition === 0 ? [started[0], started[1]] : [started[1], started[0]];
      mine.mark();
      await other.promise;
    }
    applied.push({ partition: msg.partition, key: p.bookingId, seq: p.bookingVersion });
    return { result: 'applied' };
  },
};

function envelope(bookingId: string, version: number) {
  const tenantId = randomUUID();
  return JSON.stringify({
    messageId: randomUUID(), type: 'BookingCreated', contractVersion: 1, aggregateType: 'Booking', aggregateId: bookingId,
    occurredAt: new Date().toISOString(), tenantId, correlationId: randomUUID(), causationId: null,
    payload: {
      bookingId, dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId, bookingVersion: version, programId: randomUUID(),
      status: 'Reserved', reserveExpiresAt: new Date().toISOString(), createdAt: new Date().toISOString(),
    },
  });
}

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  const kafka = createKafka(t.env);
  producer = createIdempotentProducer(kafka);
  await producer.connect();
  // produced before the consumer starts (from the beginning): its first fetch holds both partitions
  const topic = withPrefix(t.prefix, TOPICS.bookingCreated);
  await producer.send({
    topic,
    messages: [
      { key: slowKey, partition: 0, value: envelope(slowKey, 1000) },
      ...[1, 2, 3].map((seq) => ({ key: fastKey, partition: 1, value: envelope(fastKey, seq) })),
    ],
  });
  running = await startConsumer(def, { database: t.database, env: t.env, logger: t.logger, kafka });
});
afterAll(async () => {
  for (const s of started) s.mark();
  await running?.stop();
  await producer?.disconnect();
  await t?.close();
});

describe('consumer runner: partitions in parallel', () => {
  it('a message in progress on one partition does not stop the other; each partition keeps its order', async () => {
    expect(PARTITIONS_CONSUMED_CONCURRENTLY).toBeGreaterThan(1);
    await waitFor(async () => applied.length === 4, 30_000);
    expect(applied.filter((a) => a.partition === 1)).toEqual([1, 2, 3].map((seq) => ({ partition: 1, key: fastKey, seq })));
    expect(applied.filter((a) => a.partition === 0)).toEqual([{ partition: 0, key: slowKey, seq: 1000 }]);
  });
});

describe('consumer runner: offsets committed per fetched batch', () => {
  it('a burst of 60 messages on one partition is applied in order and committed in a few OffsetCommits, ending at its last offset', async () => {
    const commits: number[] = [];
    const listener = running!.consumer.on(running!.consumer.events.COMMIT_OFFSETS, (e) => {
      commits.push(e.payload.topics.reduce((n, topic) => n + topic.partitions.length, 0));
    });
    const burstKey = randomUUID();
    const topic = withPrefix(t.prefix, TOPICS.bookingCreated);
    await producer.send({ topic, messages: Array.from({ length: 60 }, (_, i) => ({ key: burstKey, partition: 2, value: envelope(burstKey, 2000 + i) })) });
    await waitFor(async () => applied.filter((a) => a.key === burstKey).length === 60, 30_000);
    expect(applied.filter((a) => a.key === burstKey).map((a) => a.seq)).toEqual(Array.from({ length: 60 }, (_, i) => 2000 + i));
    const admin = createKafka(t.env).admin();
    await admin.connect();
    try {
      const end = Number((await admin.fetchTopicOffsets(topic)).find((p) => p.partition === 2)!.offset);
      await waitFor(async () => {
        const [offsets] = await admin.fetchOffsets({ groupId: withPrefix(t.prefix, def.name), topics: [topic] });
        return Number(offsets.partitions.find((p) => p.partition === 2)!.offset) === end;
      }, 15_000);
    } finally {
      await admin.disconnect();
      listener();
    }
    // one commit per message would be 60; a fetch brings the burst in one or a few batches
    expect(commits.length).toBeGreaterThan(0);
    expect(commits.length).toBeLessThanOrEqual(10);
  });
});
