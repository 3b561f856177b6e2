/**
 * Integration test: kafkajs against a real Kafka broker.
 *
 * Uses KAFKA_BROKERS when set; otherwise starts a throw-away local broker (scripts/infra/kafka.ts,
 * needs Java 17 + Maven), so `npx vitest run server/platform/kafka/kafka.int.test.ts` works alone.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type Admin, type Consumer, type KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalKafka, type LocalKafka } from '../../../scripts/infra/kafka';
import { allTopicNames, ensureTopics, TOPICS, withPrefix } from './topics';

// A random prefix isolates this run's topics and groups, also on a shared external broker.
const prefix = `it-${randomUUID().slice(0, 8)}.`;

let local: LocalKafka | undefined;
let dataDir: string | undefined;
let kafka: Kafka;
let admin: Admin;

beforeAll(async () => {
  let brokers = process.env.KAFKA_BROKERS;
  if (!brokers) {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'kafka-int-'));
    local = await startLocalKafka({ dataDir, fresh: true, log: (line) => console.log(`[kafka] ${line}`) });
    brokers = local.brokers;
  }
  // kafkajs logs every retriable protocol error at ERROR level (e.g. NOT_LEADER_OR_FOLLOWER when
  // producing right after topic creation) although it recovers; real failures still fail the test.
  kafka = new Kafka({ clientId: 'kafka-int-test', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
}, 300_000); // first run may download Kafka from Maven Central

afterAll(async () => {
  if (admin) {
    // On a shared broker, do not leave this run's topics behind.
    if (!local) await admin.deleteTopics({ topics: allTopicNames(prefix) }).catch(() => {});
    await admin.disconnect();
  }
  await local?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

interface Received {
  key: string | null;
  value: string | null;
  partition: number;
  offset: string;
}

/** Runs `consumer` on `topic` until `count` messages arrived (or the timeout hits). */
async function consume(consumer: Consumer, topic: string, count: number, timeoutMs = 30_000): Promise<Received[]> {
  const received: Received[] = [];
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`timed out after ${timeoutMs} ms with ${received.length}/${count} messages`)),
      timeoutMs,
    );
    consumer
      .run({
        eachMessage: async ({ partition, message }: { partition: number; message: KafkaMessage }) => {
          received.push({
            key: message.key?.toString() ?? null,
            value: message.value?.toString() ?? null,
            partition,
            offset: message.offset,
          });
          if (received.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  return received;
}

/** Polls the committed offsets of `groupId` until the partition's offset reaches `offset`. */
async function waitForCommittedOffset(groupId: string, topic: string, partition: number, offset: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  let last: string | undefined;
  while (Date.now() < deadline) {
    const [topicOffsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
    last = topicOffsets?.partitions.find((p) => p.partition === partition)?.offset;
    if (last === offset) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`group ${groupId} committed offset ${last} on ${topic}[${partition}], expected ${offset}`);
}

describe('kafka (kafkajs against a real broker)', () => {
  it('ensureTopics creates every topic and DLQ, and is idempotent', async () => {
    await ensureTopics(admin, prefix);
    await ensureTopics(admin, prefix); // second call: all exist, must be a no-op

    const existing = new Set(await admin.listTopics());
    for (const topic of allTopicNames(prefix)) expect(existing.has(topic), topic).toBe(true);

    const topic = withPrefix(prefix, TOPICS.bookingCreated);
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(topics[0].partitions).toHaveLength(3);
    expect(topics[0].partitions.every((p) => p.leader >= 0)).toBe(true);
  }, 60_000);

  it('produces idempotently, consumes in order in a group, and resumes from committed offsets', async () => {
    const topic = withPrefix(prefix, TOPICS.bookingCreated);
    const groupId = `${prefix}group`;
    const key = 'booking-42';

    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const send = (value: string) => producer.send({ topic, messages: [{ key, value }] });
      for (const n of [1, 2, 3]) await send(JSON.stringify({ n }));

      // Same key => same partition => total order.
      // maxWaitTimeInMs: disconnect() waits for the in-flight fetch long-poll (default 5 s).
      const first = kafka.consumer({ groupId, maxWaitTimeInMs: 500 });
      await first.connect();
      let firstBatch: Received[];
      try {
        firstBatch = await consume(first, topic, 3);
        expect(firstBatch.map((m) => m.value)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
        expect(firstBatch.every((m) => m.key === key)).toBe(true);
        expect(new Set(firstBatch.map((m) => m.partition)).size).toBe(1);
        expect(firstBatch.map((m) => m.offset)).toEqual(['0', '1', '2']);
        // Auto-commit (default) stores "next offset to read" = 3 for the group.
        await waitForCommittedOffset(groupId, topic, firstBatch[0].partition, '3');
      } finally {
        await first.disconnect();
      }

      // Produce more after the group committed; a new member of the same group must resume at the
      // committed offset (fromBeginning only applies to groups without committed offsets).
      for (const n of [4, 5]) await send(JSON.stringify({ n }));
      const second = kafka.consumer({ groupId, maxWaitTimeInMs: 500 });
      await second.connect();
      try {
        const secondBatch = await consume(second, topic, 2);
        expect(secondBatch.map((m) => m.value)).toEqual(['{"n":4}', '{"n":5}']);
        expect(secondBatch.map((m) => m.offset)).toEqual(['3', '4']);
        expect(secondBatch.every((m) => m.key === key && m.partition === firstBatch[0].partition)).toBe(true);
      } finally {
        await second.disconnect();
      }
    } finally {
      await producer.disconnect();
    }
  }, 90_000);
});
