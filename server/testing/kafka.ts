import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage } from 'kafkajs';

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
