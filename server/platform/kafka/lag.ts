import type { Admin, Kafka } from 'kafkajs';
import type { PlatformEnv } from '../env';
import { gauge } from '../metrics';
import type { ConsumerDefinition } from './consumer-runner';
import { withPrefix } from './topics';

export interface PartitionLag {
  group: string;
  topic: string;
  partition: number;
  committed: number;
  end: number;
  lag: number;
}

/**
 * Committed offset vs end offset per consumer group, topic and partition (kafkajs admin). A group that
 * never committed counts from the start of the log (lag = end - start).
 */
export async function fetchConsumerLag(admin: Admin, env: Pick<PlatformEnv, 'KAFKA_TOPIC_PREFIX'>, groups: readonly Pick<ConsumerDefinition, 'name' | 'topics'>[]): Promise<PartitionLag[]> {
  const out: PartitionLag[] = [];
  for (const def of groups) {
    if (def.topics.length === 0) continue;
    const groupId = withPrefix(env.KAFKA_TOPIC_PREFIX, def.name);
    const topics = def.topics.map((t) => withPrefix(env.KAFKA_TOPIC_PREFIX, t));
    const committed = await admin.fetchOffsets({ groupId, topics });
    for (const t of committed) {
      const ends = await admin.fetchTopicOffsets(t.topic);
      for (const p of t.partitions) {
        const end = ends.find((e) => e.partition === p.partition);
        if (!end) continue;
        const endOffset = Number(end.high);
        const start = Number(end.low);
        const c = Number(p.offset) < 0 ? start : Number(p.offset);
        out.push({ group: def.name, topic: t.topic, partition: p.partition, committed: c, end: endOffset, lag: Math.max(0, endOffset - c) });
      }
    }
  }
  return out;
}

let bound: { kafka: Kafka; env: PlatformEnv; groups: readonly Pick<ConsumerDefinition, 'name' | 'topics'>[] } | undefined;
/**
 * The lag gauge is computed at scrape time from the broker; the worker binds its client here, with the
 * consumer groups it runs (server/main/consumers.ts: the composition root's list, platform does not import it).
 */
export function bindConsumerLagMetrics(kafka: Kafka, env: PlatformEnv, groups: readonly Pick<ConsumerDefinition, 'name' | 'topics'>[]): void {
  bound = { kafka, env, groups };
}

gauge('pin_consumer_lag_messages', 'Messages not yet committed by a consumer group (end offset - committed offset)', ['consumer'], async function () {
  if (!bound) return;
  const admin = bound.kafka.admin();
  try {
    await admin.connect();
    const lags = await fetchConsumerLag(admin, bound.env, bound.groups);
    const byGroup = new Map<string, number>();
    for (const l of lags) byGroup.set(l.group, (byGroup.get(l.group) ?? 0) + l.lag);
    for (const [consumer, lag] of byGroup) this.set({ consumer }, lag);
  } catch {
    // the broker is unreachable: leave the last value; the health endpoint reports the outage
  } finally {
    await admin.disconnect().catch(() => {});
  }
});
