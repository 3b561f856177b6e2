import type { Admin, Kafka, Producer } from 'kafkajs';
import type { Database } from '../../../server/platform/db';
import type { Env } from '../../../server/main/env';
import { toHeaders } from '../../../server/platform/kafka/client';
import { startConsumer, type ConsumerDefinition, type RunningConsumer } from '../../../server/platform/kafka/consumer-runner';
import { withPrefix } from '../../../server/platform/kafka/topics';
import type { Logger } from '../../../server/platform/logger';

/**
 * Delivery of outbox rows through the real broker in an order the test chooses: each row is produced
 * exactly as the outbox relay produces it (key, JSON value, headers + messageId), and the next one only
 * after the consumer group has committed past it — so a cross-topic order (which Kafka never promises)
 * is forced deterministically, duplicates are real second copies on the topic, and a "restart" stops
 * the real consumer, drops its group's committed offsets (the commits a crash loses) and starts it
 * again, so the broker redelivers what was already applied.
 */

export interface RelayedRow { message_id: string; topic: string; key: string; payload: unknown; headers: Record<string, unknown> | null }

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class BrokerDelivery {
  private running: RunningConsumer | null = null;
  private readonly group: string;
  /** messages the broker delivered again after a restart (the rewound span) */
  redelivered = 0;
  restarts = 0;
  deliverMs = 0;
  restartMs = 0;

  constructor(
    private readonly deps: { database: Database; env: Env; logger: Logger; kafka: Kafka; producer: Producer; admin: Admin },
    private readonly def: ConsumerDefinition,
  ) {
    this.group = withPrefix(deps.env.KAFKA_TOPIC_PREFIX, def.name);
  }

  private get topics(): string[] {
    return this.def.topics.map((t) => withPrefix(this.deps.env.KAFKA_TOPIC_PREFIX, t));
  }

  async start(): Promise<void> {
    this.running = await startConsumer(this.def, { database: this.deps.database, env: this.deps.env, logger: this.deps.logger, kafka: this.deps.kafka });
  }

  async stop(): Promise<void> {
    await this.running?.stop();
    this.running = null;
  }

  /** The end offset of every partition of the consumed topics (where a run starts). */
  async highWatermarks(): Promise<Map<string, bigint>> {
    const out = new Map<string, bigint>();
    for (const topic of this.topics) for (const p of await this.deps.admin.fetchTopicOffsets(topic)) out.set(`${topic}/${p.partition}`, BigInt(p.high));
    return out;
  }

  private async committed(): Promise<Map<string, bigint>> {
    const out = new Map<string, bigint>();
    for (const t of await this.deps.admin.fetchOffsets({ groupId: this.group, topics: this.topics })) {
      for (const p of t.partitions) out.set(`${t.topic}/${p.partition}`, BigInt(p.offset === '-1' ? 0 : p.offset));
    }
    return out;
  }

  /** Waits until the group has committed up to `targets` (offset after the last message) on each partition. */
  async caughtUp(targets: Map<string, bigint>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = await this.committed();
      if ([...targets].every(([k, v]) => (done.get(k) ?? 0n) >= v)) return;
      if (Date.now() > deadline) throw new Error(`consumer ${this.def.name} did not commit up to ${JSON.stringify([...targets].map(([k, v]) => `${k}@${v}`))} within ${timeoutMs} ms`);
      await pause(25);
    }
  }

  /** Produces one row as the relay would and waits until the consumer committed past it. */
  async deliver(row: RelayedRow): Promise<void> {
    const t0 = Date.now();
    const topic = withPrefix(this.deps.env.KAFKA_TOPIC_PREFIX, row.topic);
    const [meta] = await this.deps.producer.send({
      topic, acks: -1,
      messages: [{ key: row.key, value: JSON.stringify(row.payload), headers: toHeaders({ ...(row.headers ?? {}), messageId: row.message_id }) }],
    });
    await this.caughtUp(new Map([[`${topic}/${meta!.partition}`, BigInt(meta!.baseOffset!) + 1n]]));
    this.deliverMs += Date.now() - t0;
  }

  /**
   * Produces the rows at once (each to its topic, in the given order) and waits until the consumer
   * committed past all of them: the consumer applies its partitions concurrently, so events of one
   * object on different topics race each other for the object's row lock.
   */
  async deliverBurst(rows: RelayedRow[]): Promise<void> {
    const t0 = Date.now();
    await this.deps.producer.sendBatch({
      acks: -1,
      topicMessages: rows.map((row) => ({
        topic: withPrefix(this.deps.env.KAFKA_TOPIC_PREFIX, row.topic),
        messages: [{ key: row.key, value: JSON.stringify(row.payload), headers: toHeaders({ ...(row.headers ?? {}), messageId: row.message_id }) }],
      })),
    });
    await this.caughtUp(await this.highWatermarks());
    this.deliverMs += Date.now() - t0;
  }

  /**
   * A consumer restart that lost its commits: stop, delete the group (its committed offsets; one
   * DeleteGroups request — kafkajs's setOffsets joins the group once per topic, seconds each), start
   * again (from the beginning, as the runner subscribes) and wait until everything on the topics was
   * consumed once more: every message applied so far comes again and the inbox must absorb it.
   */
  async restartLosingCommits(): Promise<void> {
    const t0 = Date.now();
    await this.stop();
    const now = await this.highWatermarks();
    // the member left on stop; the coordinator may still be finishing that rebalance (GROUP_NOT_EMPTY)
    for (const deadline = Date.now() + 60_000; ;) {
      try {
        await this.deps.admin.deleteGroups([this.group]);
        break;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await pause(100);
      }
    }
    for (const high of now.values()) this.redelivered += Number(high);
    this.restarts++;
    await this.start();
    await this.caughtUp(now);
    this.restartMs += Date.now() - t0;
  }
}
