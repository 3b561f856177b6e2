import type { Admin } from 'kafkajs';
import { CONSUMER_GROUPS } from '../../contracts/consumer-groups';
import { TOPICS } from '../../contracts/topics';

// the topic names belong to the contracts (contracts import nothing but zod and each other; platform
// may import contracts): re-exported here for the Kafka plumbing's callers
export { TOPICS, type TopicKey, type TopicName } from '../../contracts/topics';

/** Dead-letter topic of a consumer group (unprefixed; combine with `withPrefix`). */
/**
 * Header of a message that ops sent back from a DLQ: the one consumer group it is meant for. The other
 * groups on the topic applied (or refused) the original already, so they skip the copy.
 */
export const REQUEUE_FOR_HEADER = 'ops.requeue-for';

export function dlqTopic(group: string): string {
  return `${group}.dlq`;
}

export function withPrefix(prefix: string, name: string): string {
  return prefix + name;
}

/**
 * The topics that carry an aggregate's state rather than a step of a process: chessboard's objects and
 * projects. They are compacted by key (the aggregate id), so the broker keeps at least the latest event of
 * every object for ever instead of dropping old segments after the retention time: a consumer that
 * starts from the beginning (a new projection, a reset consumer group) still finds every object that
 * exists. Booking and deal events stay on time-based retention: each is a step the saga acts on once.
 */
export const COMPACTED_TOPICS: readonly string[] = [
  TOPICS.propertyObjectUpserted, TOPICS.propertyObjectStatusChanged, TOPICS.propertyObjectDeleted,
  TOPICS.projectUpserted, TOPICS.projectDeleted,
];

const CLEANUP_POLICY = 'cleanup.policy' as const;

/**
 * The cleanup.policy a topic of the system is created and kept with. Names arrive prefixed
 * (KAFKA_TOPIC_PREFIX), and no topic name ends with another one, so the unprefixed name is matched as a suffix.
 */
export function cleanupPolicyOf(prefixedName: string): 'compact' | 'delete' {
  return COMPACTED_TOPICS.some((name) => prefixedName.endsWith(name)) ? 'compact' : 'delete';
}

/** Every topic of the system (event topics + one DLQ per consumer group), each prefixed. */
export function allTopicNames(prefix = ''): string[] {
  const names = [...Object.values(TOPICS), ...Object.values(CONSUMER_GROUPS).map(dlqTopic)];
  return names.map((name) => withPrefix(prefix, name));
}

/**
 * Creates the topics of `allTopicNames(prefix)` that do not exist yet (replication factor 1,
 * `partitions` partitions) and waits until every partition has a leader. Idempotent and safe to
 * run concurrently from several processes: topics that already exist are left as they are.
 *
 * Note: the broker publishes a new partition's leader in its metadata slightly before the replica
 * is ready, so a produce within a few hundred ms after creation may get a retriable
 * NOT_LEADER_OR_FOLLOWER; kafkajs retries it (and logs it at ERROR level).
 */
export async function ensureTopics(admin: Admin, prefix = '', partitions = 3, replication: TopicReplication = {}): Promise<void> {
  await ensureNamedTopics(admin, allTopicNames(prefix), partitions, replication);
}

/** Replicas of a topic created by ensureTopics (default: 1, for the single local broker; a cluster: 3 and 2). */
export interface TopicReplication { replicationFactor?: number; minInsyncReplicas?: number }

/** `ensureTopics` for an explicit list of (already prefixed) topic names. */
export async function ensureNamedTopics(admin: Admin, wanted: string[], partitions = 3, replication: TopicReplication = {}): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter((topic) => !existing.has(topic));
  if (missing.length === 0) return;

  // kafkajs's own waitForLeaders gives up on UNKNOWN_TOPIC_OR_PARTITION while a KRaft broker is
  // still propagating a fresh topic (seen with 4.x), so create without it and wait here instead.
  await admin.createTopics({
    waitForLeaders: false,
    topics: missing.map((topic) => ({
      topic, numPartitions: partitions, replicationFactor: replication.replicationFactor ?? 1,
      configEntries: [
        ...(replication.minInsyncReplicas ? [{ name: 'min.insync.replicas', value: String(replication.minInsyncReplicas) }] : []),
        { name: CLEANUP_POLICY, value: cleanupPolicyOf(topic) },
      ],
    })),
  });
  await waitForLeaders(admin, missing);
}

async function waitForLeaders(admin: Admin, topics: string[], minPartitions = 1, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      const ready =
        metadata.length === topics.length &&
        metadata.every((t) => t.partitions.length >= minPartitions && t.partitions.every((p) => p.leader >= 0));
      // a leader in the metadata is not yet a leader that answers: ListOffsets right after creation can
      // still get NOT_LEADER_OR_FOLLOWER (seen in CI on the ops lag read), so ask every partition once
      if (ready) {
        await Promise.all(topics.map((topic) => admin.fetchTopicOffsets(topic)));
        return;
      }
    } catch (error) {
      // UNKNOWN_TOPIC_OR_PARTITION / LEADER_NOT_AVAILABLE / NOT_LEADER_OR_FOLLOWER right after creation: retry below.
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for leaders of topics: ${topics.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

// ---------------------------------------------------------------------------------------------
// `npm run kafka:topics` and the start-up check of web and worker

export interface TopicSettings {
  prefix: string;
  partitions: number;
  replicationFactor: number;
  minInsyncReplicas: number;
}

/** What `reconcileTopics` found and did, per topic. */
export type TopicAction =
  | { topic: string; action: 'created'; partitions: number; replicationFactor: number; minInsyncReplicas: number; cleanupPolicy: 'compact' | 'delete' }
  | { topic: string; action: 'partitions-added'; from: number; to: number }
  | { topic: string; action: 'config-changed'; key: 'min.insync.replicas' | 'cleanup.policy'; from: string | null; to: string }
  | { topic: string; action: 'unchanged'; note?: string }
  | { topic: string; action: 'problem'; problem: string };

export interface TopicReport {
  actions: TopicAction[];
  created: number;
  changed: number;
  unchanged: number;
  problems: number;
}

const MIN_ISR = 'min.insync.replicas' as const;
// kafkajs's ConfigResourceTypes.TOPIC; DescribeConfigs' configSource 1 = DYNAMIC_TOPIC_CONFIG (set on the topic)
const TOPIC_RESOURCE = 2;
const DYNAMIC_TOPIC_CONFIG = 1;

/**
 * Creates or verifies every topic and DLQ of the system (`allTopicNames(prefix)`) against `settings`:
 * a missing topic is created with its partitions, replication factor and min.insync.replicas; an
 * existing one gets partitions added (never removed: that would move keys between partitions) and its
 * min.insync.replicas set (the other settings set on the topic are kept). A replication factor that
 * differs cannot be changed by this command (it needs a partition reassignment) and is reported as a
 * problem, as is a topic that could not be created. Idempotent: a second run changes nothing.
 */
export async function reconcileTopics(admin: Admin, settings: TopicSettings): Promise<TopicReport> {
  if (settings.minInsyncReplicas > settings.replicationFactor) {
    throw new Error(`${MIN_ISR} (${settings.minInsyncReplicas}) cannot exceed the replication factor (${settings.replicationFactor})`);
  }
  const wanted = allTopicNames(settings.prefix);
  const actions: TopicAction[] = [];
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter((t) => !existing.has(t));
  const present = wanted.filter((t) => existing.has(t));

  if (missing.length > 0) {
    try {
      await admin.createTopics({
        waitForLeaders: false,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: settings.partitions,
          replicationFactor: settings.replicationFactor,
          configEntries: [{ name: MIN_ISR, value: String(settings.minInsyncReplicas) }, { name: CLEANUP_POLICY, value: cleanupPolicyOf(topic) }],
        })),
      });
      await waitForLeaders(admin, missing);
      for (const topic of missing) {
        actions.push({
          topic, action: 'created', partitions: settings.partitions, replicationFactor: settings.replicationFactor,
          minInsyncReplicas: settings.minInsyncReplicas, cleanupPolicy: cleanupPolicyOf(topic),
        });
      }
    } catch (error) {
      const detail = describeKafkaError(error);
      // another process may have created some of them meanwhile: report per topic what is there now
      const now = new Set(await admin.listTopics());
      for (const topic of missing) {
        if (now.has(topic)) present.push(topic);
        else actions.push({ topic, action: 'problem', problem: `could not be created: ${detail}` });
      }
    }
  }

  const grown: string[] = [];
  if (present.length > 0) {
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics: present });
    const byName = new Map(metadata.map((m) => [m.name, m]));
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: present.map((name) => ({ type: TOPIC_RESOURCE, name })),
    });
    const configOf = new Map(configs.resources.map((r) => [r.resourceName, r.configEntries]));
    for (const topic of present) {
      const partitions = byName.get(topic)?.partitions ?? [];
      const replicationFactor = Math.max(0, ...partitions.map((p) => p.replicas.length));
      const notes: string[] = [];
      if (replicationFactor !== settings.replicationFactor) {
        actions.push({
          topic,
          action: 'problem',
          problem: `replication factor is ${replicationFactor}, configured ${settings.replicationFactor}: change it with a partition reassignment (kafka-reassign-partitions.sh), this command does not move replicas; the topic was left as it is`,
        });
        // its min.insync.replicas is not touched either: above the actual replica count it would refuse every acks=all write
        continue;
      }
      if (partitions.length < settings.partitions) {
        await admin.createPartitions({ topicPartitions: [{ topic, count: settings.partitions }] });
        grown.push(topic);
        actions.push({ topic, action: 'partitions-added', from: partitions.length, to: settings.partitions });
      } else if (partitions.length > settings.partitions) {
        notes.push(`has ${partitions.length} partitions, more than the configured ${settings.partitions}; left as they are`);
      }
      const entries = configOf.get(topic) ?? [];
      // a topic made before its policy was decided (a state topic on the broker's default `delete`) is
      // switched in place: compaction then keeps the latest event per key of what the retention left
      const wantedConfig: Record<typeof MIN_ISR | typeof CLEANUP_POLICY, string> = { [MIN_ISR]: String(settings.minInsyncReplicas), [CLEANUP_POLICY]: cleanupPolicyOf(topic) };
      const differing = (Object.keys(wantedConfig) as (keyof typeof wantedConfig)[])
        .filter((key) => (entries.find((e) => e.configName === key)?.configValue ?? null) !== wantedConfig[key]);
      if (differing.length > 0) {
        // AlterConfigs replaces the topic's whole set of dynamic settings: keep the others as they are
        const kept = entries
          .filter((e) => !(e.configName in wantedConfig) && (e as { configSource?: number }).configSource === DYNAMIC_TOPIC_CONFIG && !e.isSensitive)
          .map((e) => ({ name: e.configName, value: e.configValue }));
        await admin.alterConfigs({
          validateOnly: false,
          resources: [{ type: TOPIC_RESOURCE, name: topic, configEntries: [...kept, ...Object.entries(wantedConfig).map(([name, value]) => ({ name, value }))] }],
        });
        for (const key of differing) {
          actions.push({ topic, action: 'config-changed', key, from: entries.find((e) => e.configName === key)?.configValue ?? null, to: wantedConfig[key] });
        }
      }
      if (!actions.some((a) => a.topic === topic)) actions.push({ topic, action: 'unchanged', ...(notes.length ? { note: notes.join('; ') } : {}) });
    }
  }

  // the controller applies new partitions through the metadata log: a broker's metadata shows them a
  // moment later (a fresh-clone CI run read 1 of 3 right after), so the command returns when they are
  // there and lead — whoever runs next (a producer, the start-up check, a second run) sees them
  if (grown.length > 0) await waitForLeaders(admin, grown, settings.partitions);

  const order = new Map(wanted.map((t, i) => [t, i]));
  actions.sort((a, b) => order.get(a.topic)! - order.get(b.topic)!);
  const topicsWith = (pred: (a: TopicAction) => boolean) => new Set(actions.filter(pred).map((a) => a.topic)).size;
  return {
    actions,
    created: topicsWith((a) => a.action === 'created'),
    changed: topicsWith((a) => a.action === 'partitions-added' || a.action === 'config-changed'),
    unchanged: topicsWith((a) => a.action === 'unchanged'),
    problems: topicsWith((a) => a.action === 'problem'),
  };
}

/** One line per action, for the operator. */
export function formatTopicAction(a: TopicAction): string {
  switch (a.action) {
    case 'created':
      return `created    ${a.topic} (${a.partitions} partitions, replication factor ${a.replicationFactor}, ${MIN_ISR}=${a.minInsyncReplicas}${a.cleanupPolicy === 'compact' ? `, ${CLEANUP_POLICY}=compact` : ''})`;
    case 'partitions-added':
      return `partitions ${a.topic}: ${a.from} -> ${a.to}`;
    case 'config-changed':
      return `config     ${a.topic}: ${a.key} ${a.from ?? '(broker default)'} -> ${a.to}`;
    case 'unchanged':
      return `ok         ${a.topic}${a.note ? ` (${a.note})` : ''}`;
    case 'problem':
      return `PROBLEM    ${a.topic}: ${a.problem}`;
  }
}

/** The system's topics (prefixed) that the broker does not have. */
export async function findMissingTopics(admin: Admin, prefix: string): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  return allTopicNames(prefix).filter((t) => !existing.has(t));
}

/** The one line web and worker print before they exit when topics are missing. */
export function missingTopicsLine(missing: string[]): string {
  return `Kafka topic${missing.length > 1 ? 's' : ''} missing: ${missing.join(', ')} — create ${missing.length > 1 ? 'them' : 'it'} with \`npm run kafka:topics\` (same KAFKA_BROKERS and KAFKA_TOPIC_PREFIX)`;
}

function describeKafkaError(error: unknown): string {
  const e = error as { message?: string; type?: string; errors?: unknown[]; topicErrors?: unknown[] };
  const nested = (e.topicErrors ?? e.errors ?? []) as { type?: string; message?: string }[];
  const first = nested.find((n) => n?.type || n?.message);
  return [e.type ?? e.message, first ? (first.type ?? first.message) : null].filter(Boolean).join(': ') || String(error);
}
