import type { Admin, Kafka } from 'kafkajs';
import { registeredConsumers } from '../../platform/registry';
import type { PlatformEnv } from '../../platform/env';
import type { ConsumerDefinition } from '../../platform/kafka/consumer-runner';
import { createKafka } from '../../platform/kafka/client';
import { dlqTopic, withPrefix } from '../../platform/kafka/topics';
import type { Logger } from '../../platform/logger';

/**
 * The ops dashboard's view of Kafka: consumer-group lag (committed offsets vs end offsets) and the size
 * of the DLQ topics. One kafkajs client and one admin connection per broker list and process; the web
 * app is stateless otherwise, so a replica that restarts simply reconnects.
 */

interface Shared {
  kafka: Kafka;
  admin?: Promise<Admin>;
  /** how many admin connections this process opened (a test reads it: a refused request keeps the connection) */
  connects: number;
}

const g = globalThis as unknown as { __pinOpsKafka?: Map<string, Shared> };
const clients = (g.__pinOpsKafka ??= new Map());

/** The process's kafkajs client for ops reads and actions (DLQ requeue, run now). */
export function opsKafka(env: Pick<PlatformEnv, 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID'>, logger?: Logger): Kafka {
  let shared = clients.get(env.KAFKA_BROKERS);
  if (!shared) {
    shared = { kafka: createKafka(env, logger, '-ops'), connects: 0 };
    clients.set(env.KAFKA_BROKERS, shared);
  }
  return shared.kafka;
}

function admin(env: Pick<PlatformEnv, 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID'>): Promise<Admin> {
  opsKafka(env);
  const shared = clients.get(env.KAFKA_BROKERS)!;
  if (!shared.admin) {
    const a = shared.kafka.admin();
    shared.connects++;
    shared.admin = a.connect().then(() => a);
    // a failed connect must not poison the cache: the next read tries again
    shared.admin.catch(() => { if (clients.get(env.KAFKA_BROKERS) === shared) shared.admin = undefined; });
  }
  return shared.admin;
}

/**
 * kafkajs errors that mean the connection itself is gone (broker down or restarted, timeouts after
 * retries). A protocol answer (unknown topic, not the leader yet, a group that does not exist) is the
 * request's problem: the connection stays, so other reads in flight on it are not cut off.
 */
const CONNECTION_ERRORS = new Set([
  'KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError', 'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError', 'KafkaJSLockTimeout',
]);
export function isConnectionError(e: unknown): boolean {
  let error = e as { name?: string; cause?: unknown } | undefined;
  // retries exhausted (kafkajs keeps the last retry's error as `cause`): that error decides
  for (let depth = 0; error?.name === 'KafkaJSNumberOfRetriesExceeded' && error.cause && depth < 5; depth++) error = error.cause as typeof error;
  return CONNECTION_ERRORS.has(error?.name ?? '');
}

/** Admin connections opened by this process for these brokers (tests). */
export function opsAdminConnects(env: Pick<PlatformEnv, 'KAFKA_BROKERS'>): number {
  return clients.get(env.KAFKA_BROKERS)?.connects ?? 0;
}

/** Runs an admin call; a broken connection is dropped so the next call reconnects. */
async function withAdmin<T>(env: Pick<PlatformEnv, 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID'>, fn: (a: Admin) => Promise<T>): Promise<T> {
  const connection = admin(env);
  const a = await connection;
  try {
    return await fn(a);
  } catch (e) {
    const shared = clients.get(env.KAFKA_BROKERS);
    // dropped once: a concurrent failure on the same connection must not disconnect its successor
    if (shared && isConnectionError(e) && shared.admin === connection) {
      shared.admin = undefined;
      void a.disconnect().catch(() => {});
    }
    throw e;
  }
}

/** Closes every ops Kafka connection of the process (tests, shutdown). */
export async function closeOpsKafka(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.allSettled(all.map(async (s) => (await s.admin)?.disconnect()));
}

export interface PartitionOffsets {
  partition: number;
  low: number;
  high: number;
}

export async function topicOffsets(env: PlatformEnv, topic: string): Promise<PartitionOffsets[]> {
  return withAdmin(env, async (a) => {
    const rows = await a.fetchTopicOffsets(topic);
    return rows
      .map((r) => ({ partition: r.partition, low: Number(r.low), high: Number(r.high) }))
      .sort((x, y) => x.partition - y.partition);
  });
}

export interface TopicLag {
  /** unprefixed topic name */
  topic: string;
  committed: number;
  end: number;
  lag: number;
  partitions: { partition: number; committed: number | null; end: number; lag: number }[];
}

export interface GroupLag {
  /** unprefixed consumer group (= consumer name) */
  group: string;
  lag: number;
  topics: TopicLag[];
}

/** Every consumer group the worker runs, with the topics it consumes (unprefixed). */
export function consumerGroups(): { group: string; inbox: ConsumerDefinition['inbox']; topics: string[] }[] {
  return registeredConsumers().map((c) => ({ group: c.name, inbox: c.inbox, topics: [...c.topics] }));
}

/**
 * Lag per group and topic: end offset (high watermark) minus the group's committed offset, summed over
 * partitions. A partition the group never committed counts from the low watermark (everything still
 * retained is unconsumed), which is what the group would read with fromBeginning.
 */
export async function consumerLag(env: PlatformEnv): Promise<GroupLag[]> {
  const prefix = env.KAFKA_TOPIC_PREFIX;
  return withAdmin(env, async (a) => {
    const groups = consumerGroups();
    // every group's committed offsets and every topic's end offsets asked for at once, each topic once
    // (groups share topics): one round trip's time for the whole view, not one per group after another
    const topicNames = [...new Set(groups.flatMap((g) => g.topics.map((t) => withPrefix(prefix, t))))];
    const [committedByGroup, ends] = await Promise.all([
      Promise.all(groups.map(({ group, topics }) => a.fetchOffsets({ groupId: withPrefix(prefix, group), topics: topics.map((t) => withPrefix(prefix, t)) }))),
      Promise.all(topicNames.map((topic) => a.fetchTopicOffsets(topic))),
    ]);
    const endsOf = new Map(topicNames.map((topic, i) => [topic, ends[i]!]));
    return groups.map(({ group, topics }, g) => {
      const byTopic = new Map(committedByGroup[g]!.map((c) => [c.topic, new Map(c.partitions.map((p) => [p.partition, Number(p.offset)]))]));
      const topicRows: TopicLag[] = topics.map((name) => {
        const topic = withPrefix(prefix, name);
        const parts = endsOf.get(topic)!.map((e) => {
          const c = byTopic.get(topic)?.get(e.partition);
          const end = Number(e.high);
          const has = c !== undefined && c >= 0;
          return { partition: e.partition, committed: has ? c! : null, end, lag: Math.max(0, end - (has ? c! : Number(e.low))) };
        }).sort((x, y) => x.partition - y.partition);
        return {
          topic: name,
          committed: parts.reduce((s, p) => s + (p.committed ?? 0), 0),
          end: parts.reduce((s, p) => s + p.end, 0),
          lag: parts.reduce((s, p) => s + p.lag, 0),
          partitions: parts,
        };
      });
      return { group, lag: topicRows.reduce((s, t) => s + t.lag, 0), topics: topicRows };
    });
  });
}

/** The DLQ topic of each consumer group (prefixed) with its partitions' low/high watermarks. */
export async function dlqTopicOffsets(env: PlatformEnv): Promise<{ group: string; topic: string; partitions: PartitionOffsets[] }[]> {
  return Promise.all(consumerGroups().map(async ({ group }) => {
    const topic = withPrefix(env.KAFKA_TOPIC_PREFIX, dlqTopic(group));
    return { group, topic, partitions: await topicOffsets(env, topic) };
  }));
}
