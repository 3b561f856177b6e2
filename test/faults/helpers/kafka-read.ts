import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';

export interface TopicMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  messageId: string | null;
}

export function plainKafka(brokers: string): Kafka {
  return new Kafka({ clientId: `faults-${randomUUID().slice(0, 8)}`, brokers: brokers.split(','), logLevel: logLevel.NOTHING });
}

/**
 * Everything on `topics` right now: reads each partition from offset 0 up to its high watermark
 * (taken before reading), so duplicates are counted exactly, not "until N arrived".
 */
export async function readEverything(brokers: string, topics: string[], timeoutMs = 120_000): Promise<TopicMessage[]> {
  const kafka = plainKafka(brokers);
  const admin = kafka.admin();
  await admin.connect();
  const remaining = new Map<string, bigint>();
  try {
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        const high = BigInt(p.high);
        const low = BigInt(p.low);
        if (high > low) remaining.set(`${topic}/${p.partition}`, high);
      }
    }
  } finally {
    await admin.disconnect();
  }
  const all: TopicMessage[] = [];
  if (remaining.size === 0) return all;
  const consumer = kafka.consumer({ groupId: `faults-reader-${randomUUID()}`, maxBytesPerPartition: 4 * 1024 * 1024 });
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  let done!: () => void;
  const finished = new Promise<void>((r) => { done = r; });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, v?.toString() ?? '']));
      let messageId: string | null = headers.messageId ?? null;
      if (!messageId && message.value) {
        try { messageId = (JSON.parse(message.value.toString()) as { messageId?: string }).messageId ?? null; } catch { /* not JSON */ }
      }
      all.push({ topic, partition, offset: message.offset, key: message.key?.toString() ?? null, value: message.value?.toString() ?? null, headers, messageId });
      const k = `${topic}/${partition}`;
      const high = remaining.get(k);
      if (high !== undefined && BigInt(message.offset) + 1n >= high) {
        remaining.delete(k);
        if (remaining.size === 0) done();
      }
    },
  });
  const timer = setTimeout(() => done(), timeoutMs);
  await finished;
  clearTimeout(timer);
  await consumer.disconnect();
  if (remaining.size > 0) throw new Error(`readEverything: partitions not read to their end within ${timeoutMs} ms: ${[...remaining.keys()].join(', ')}`);
  return all;
}

/** Message ids seen more than once, and how many extra copies there are. */
export function duplicatesOf(messages: TopicMessage[]): { duplicateIds: string[]; extraCopies: number } {
  const seen = new Map<string, number>();
  for (const m of messages) if (m.messageId) seen.set(m.messageId, (seen.get(m.messageId) ?? 0) + 1);
  const duplicateIds = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  return { duplicateIds, extraCopies: [...seen.values()].reduce((s, n) => s + n - 1, 0) };
}
