import type { Admin } from 'kafkajs';

/**
 * Every Kafka topic the system produces to or consumes from. Names are versioned (`.v1`): an
 * incompatible payload change gets a new topic instead of breaking existing consumers.
 * An environment-wide prefix (KAFKA_TOPIC_PREFIX) is applied on top via `withPrefix`.
 */
export const TOPICS = {
  bookingCreated: 'pin.crm.booking-created.v1',
  bookingConfirmed: 'pin.crm.booking-confirmed.v1',
  bookingPaid: 'pin.crm.booking-paid.v1',
  bookingExtended: 'pin.crm.booking-extended.v1',
  bookingExpired: 'pin.crm.booking-expired.v1',
  bookingCancelled: 'pin.crm.booking-cancelled.v1',
  dealCancelled: 'pin.crm.deal-cancelled.v1',
  dealSaleStarted: 'pin.crm.deal-sale-started.v1',
  propertyObjectStatusChanged: 'pin.chessboard.property-object-status-changed.v1',
  propertyObjectUpserted: 'pin.chessboard.property-object-upserted.v1',
  propertyObjectDeleted: 'pin.chessboard.property-object-deleted.v1',
  projectUpserted: 'pin.chessboard.project-upserted.v1',
  projectDeleted: 'pin.chessboard.project-deleted.v1',
} as const;

export type TopicKey = keyof typeof TOPICS;
export type TopicName = (typeof TOPICS)[TopicKey];

/** Consumer group ids; each group also owns a dead-letter topic (`dlqTopic`). */
export const CONSUMER_GROUPS = {
  crmPropertyObjectStatus: 'chessboard.crm-property-object-status',
  catalogCardProjection: 'catalog.card-projection',
  crmPropertyObjectProjection: 'crm.property-object-projection',
} as const;

export type ConsumerGroupId = (typeof CONSUMER_GROUPS)[keyof typeof CONSUMER_GROUPS];

/** Dead-letter topic of a consumer group (unprefixed; combine with `withPrefix`). */
export function dlqTopic(group: string): string {
  return `${group}.dlq`;
}

export function withPrefix(prefix: string, name: string): string {
  return prefix + name;
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
export async function ensureTopics(admin: Admin, prefix = '', partitions = 3): Promise<void> {
  await ensureNamedTopics(admin, allTopicNames(prefix), partitions);
}

/** `ensureTopics` for an explicit list of (already prefixed) topic names. */
export async function ensureNamedTopics(admin: Admin, wanted: string[], partitions = 3): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter((topic) => !existing.has(topic));
  if (missing.length === 0) return;

  // kafkajs's own waitForLeaders gives up on UNKNOWN_TOPIC_OR_PARTITION while a KRaft broker is
  // still propagating a fresh topic (seen with 4.x), so create without it and wait here instead.
  await admin.createTopics({
    waitForLeaders: false,
    topics: missing.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
  });
  await waitForLeaders(admin, missing);
}

async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      const ready =
        metadata.length === topics.length &&
        metadata.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
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
