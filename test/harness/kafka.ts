import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage, Producer } from 'kafkajs';
import { expect } from 'vitest';
import type { CrmPayload, CrmTopic } from '../../server/contracts/crm';
import { createIdempotentProducer, createKafka } from '../../server/platform/kafka/client';
import { startConsumer, type ConsumerDefinition, type RunningConsumer } from '../../server/platform/kafka/consumer-runner';
import { OutboxRelay } from '../../server/platform/outbox/relay';
import { writeOutbox } from '../../server/platform/outbox/write';
import type { TestContext } from './harness';

export interface Received {
  topic: string;
  partition: number;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  message: KafkaMessage;
}

/** Reads everything on `topics` from the beginning with a throwaway group until `until` holds or time runs out. */
export async function readTopics(kafka: Kafka, topics: string[], until: (all: Received[]) => boolean, timeoutMs = 30_000): Promise<Received[]> {
  const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}` });
  const all: Received[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  let done: () => void;
  const finished = new Promise<void>((r) => { done = r; });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      all.push({
        topic, partition, message,
        key: message.key?.toString() ?? null,
        value: message.value?.toString() ?? null,
        headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, v?.toString() ?? ''])),
      });
      if (until(all)) done();
    },
  });
  const timer = setTimeout(() => done(), timeoutMs);
  await finished;
  clearTimeout(timer);
  await consumer.disconnect();
  return all;
}

export async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * One consumer under test through the real broker: `outbox`'s relay publishes to Kafka and
 * `definition` consumes it (e.g. crm outbox → relay → Kafka → startConsumer → chessboard). The
 * consumer and integration tests of chessboard, crm, messenger, notifications and the logs test all
 * build the same chain; stop()/start() restart the consumer for redelivery tests.
 */
export interface BrokerPipeline {
  kafka: Kafka;
  /** the relay's producer; tests also send raw (poison, duplicate) messages with it */
  producer: Producer;
  relay: OutboxRelay;
  /** the running consumer, null between stop() and start() */
  readonly consumer: RunningConsumer | null;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** publishes what the outbox holds; a failed row fails the test */
  drain(): Promise<void>;
  /** crm's side of a test: the event as crm's outbox row (a deal-… topic as a Deal, others as a Booking), published by the relay; its messageId */
  publishCrm<T extends CrmTopic>(topic: T, payload: CrmPayload<T>): Promise<string>;
  /** consumer, relay, producer — in that order, whatever of them started (for afterAll, before t.close()) */
  close(): Promise<void>;
}

export async function startBrokerPipeline(t: TestContext, outbox: 'crm' | 'chessboard', definition: ConsumerDefinition): Promise<BrokerPipeline> {
  const kafka = createKafka(t.env);
  const producer = createIdempotentProducer(kafka);
  await producer.connect();
  const relay = new OutboxRelay(outbox, { database: t.database, env: t.env, logger: t.logger, producer });
  let consumer: RunningConsumer | null = null;
  const pipeline: BrokerPipeline = {
    kafka, producer, relay,
    get consumer() { return consumer; },
    async start() { consumer = await startConsumer(definition, { database: t.database, env: t.env, logger: t.logger, kafka }); },
    async stop() { await consumer?.stop(); consumer = null; },
    async drain() { expect((await relay.drain()).failed).toBe(0); },
    async publishCrm(topic, payload) {
      const p = payload as { bookingId?: string | null; dealId: string; tenantId: string };
      const deal = topic.includes('deal-');
      const messageId = await t.database.db.transaction((tx) => writeOutbox(tx, 'crm', {
        topic, aggregateType: deal ? 'Deal' : 'Booking', aggregateId: deal ? p.dealId : p.bookingId!, tenantId: p.tenantId,
        payload: payload as never, correlationId: randomUUID(),
      }));
      await pipeline.drain();
      return messageId;
    },
    async close() {
      await consumer?.stop();
      await relay.release();
      await producer.disconnect();
    },
  };
  try {
    await pipeline.start();
  } catch (e) {
    await pipeline.close(); // the caller gets no pipeline to close in its afterAll
    throw e;
  }
  return pipeline;
}
