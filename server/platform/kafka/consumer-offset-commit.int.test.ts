import { randomUUID } from 'node:crypto';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { waitFor } from '../../../test/harness/kafka';
import { createKafka, createIdempotentProducer } from './client';
import { OFFSET_COMMIT_INTERVAL_MS, startConsumer, type ConsumerDefinition } from './consumer-runner';
import { TOPICS, withPrefix } from './topics';

/**
 * Offsets are committed off the fetch path (offsetCommitter in consumer-runner.ts): kafkajs fetches again
 * only once eachBatch has returned, so an OffsetCommit awaited at the end of every batch delayed every
 * message that arrived meanwhile by a broker round trip, and cost one commit per message at the saga's
 * load (issue #17, bench saga-capacity). Real broker and PostgreSQL; the consumer's commitOffsets is
 * wrapped to count the commits and, in one test, to make them slow.
 */
let t: TestContext;
let producer: Producer;
const applied = new Map<string, number>(); // messageId → when applied
let commits = 0;
let commitDelayMs = 0;

const def = (name: string): ConsumerDefinition => ({
  name,
  inbox: 'chessboard',
  topics: [TOPICS.bookingCreated],
  async handle(_tx, msg) {
    applied.set(msg.envelope.messageId, Date.now());
    return { result: 'applied' };
  },
});

/** The real client, whose consumers count (and may delay) their offset commits. */
function instrumented(kafka: Kafka): Kafka {
  return new Proxy(kafka, {
    get(target, prop, receiver) {
      if (prop !== 'consumer') return Reflect.get(target, prop, receiver);
      return (config: Parameters<Kafka['consumer']>[0]): Consumer => {
        const consumer = target.consumer(config);
        const commit = consumer.commitOffsets.bind(consumer);
        consumer.commitOffsets = async (offsets) => {
          commits += 1;
          if (commitDelayMs) await new Promise((r) => setTimeout(r, commitDelayMs));
          return commit(offsets);
        };
        return consumer;
      };
    },
  });
}

function message(key: string) {
  const tenantId = randomUUID();
  const messageId = randomUUID();
  return {
    messageId,
    value: JSON.stringify({
      messageId, type: 'BookingCreated', contractVersion: 1, aggregateType: 'Booking', aggregateId: key,
      occurredAt: new Date().toISOString(), tenantId, correlationId: randomUUID(), causationId: null,
      payload: {
        bookingId: key, dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId, bookingVersion: 1, programId: randomUUID(),
        status: 'Reserved', reserveExpiresAt: new Date().toISOString(), createdAt: new Date().toISOString(),
      },
    }),
  };
}

const topic = () => withPrefix(t.prefix, TOPICS.bookingCreated);
/** sends one message and waits until the consumer has applied it */
async function sendApplied(key: string): Promise<string> {
  const m = message(key);
  await producer.send({ topic: topic(), messages: [{ key, value: m.value }] });
  await waitFor(async () => applied.has(m.messageId), 30_000, 10);
  return m.messageId;
}

async function committedLag(kafka: Kafka, group: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchOffsets({ groupId: withPrefix(t.prefix, group), topics: [topic()] });
    const ends = await admin.fetchTopicOffsets(topic());
    return ends.reduce((lag, end) => {
      const committed = Number(offsets[0].partitions.find((p) => p.partition === end.partition)?.offset ?? -1);
      return lag + Number(end.offset) - Math.max(0, committed);
    }, 0);
  } finally {
    await admin.disconnect();
  }
}

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  producer = createIdempotentProducer(createKafka(t.env));
  await producer.connect();
});
afterAll(async () => {
  await producer?.disconnect();
  await t?.close();
});

describe('consumer offset commits', () => {
  it('the next message is applied while the previous one\'s offset commit is still on its way', async () => {
    const running = await startConsumer(def('test.commit-off-path'), { database: t.database, env: t.env, logger: t.logger, kafka: instrumented(createKafka(t.env)) });
    try {
      const key = randomUUID(); // one key: one partition, so the second message needs the next fetch
      await sendApplied(key); // the group is joined and the partition's position known
      await new Promise((r) => setTimeout(r, OFFSET_COMMIT_INTERVAL_MS)); // the next commit goes out at once
      commitDelayMs = 3_000;
      const first = message(key);
      await producer.send({ topic: topic(), messages: [{ key, value: first.value }] });
      await waitFor(async () => applied.has(first.messageId), 30_000, 10);
      const sentAt = Date.now();
      const second = await sendApplied(key);
      // awaited at the end of the first message's batch, the 3 s commit held back the fetch of the second
      expect(applied.get(second)! - sentAt).toBeLessThan(1_500);
    } finally {
      commitDelayMs = 0;
      await running.stop();
    }
  });

  it('commits at most once per interval, and what was applied before a stop is committed', async () => {
    const kafka = instrumented(createKafka(t.env));
    const group = 'test.commit-interval';
    const running = await startConsumer(def(group), { database: t.database, env: t.env, logger: t.logger, kafka });
    let stopped = false;
    try {
      await sendApplied(randomUUID());
      await new Promise((r) => setTimeout(r, OFFSET_COMMIT_INTERVAL_MS));
      commits = 0;
      const started = Date.now();
      for (let i = 0; i < 5; i++) await sendApplied(randomUUID()); // five batches one after another
      const elapsed = Date.now() - started;
      // one commit per batch before; now one per interval (plus the first, sent at once)
      expect(commits).toBeLessThanOrEqual(1 + Math.ceil(elapsed / OFFSET_COMMIT_INTERVAL_MS));
      expect(commits).toBeLessThan(5);
      await running.stop(); // within the interval: the last offsets are only recorded; the stop commits them
      stopped = true;
      expect(await committedLag(kafka, group)).toBe(0);
    } finally {
      if (!stopped) await running.stop();
    }
  });
});
