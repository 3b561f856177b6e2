/**
 * Test support for the end-to-end event backbone tests (test/integration/saga.int.test.ts), not a test file
 * itself: a seeded chessboard (through its commands, so the catalog cards come from real upsert
 * events), both consumers on the real broker, and the outbox relay running continuously the way the
 * worker runs it (a cycle every ~150 ms instead of on NOTIFY + cron).
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import { cardProjectionConsumer } from '../../server/catalog/card-projection.consumer';
import { SYSTEM_ACTOR } from '../../server/auth/actor';
import { upsertBuilding, upsertProject, upsertPropertyObject } from '../../server/chessboard/commands';
import { crmPropertyObjectStatusConsumer } from '../../server/chessboard/crm-property-object-status.consumer';
import { crmPropertyObjectProjectionConsumer } from '../../server/crm/property-object-projection.consumer';
import { runJobCycle, type JobRunResult } from '../../server/platform/jobs/run-log';
import { createKafka } from '../../server/platform/kafka/client';
import { startConsumer, type ConsumerDefinition, type RunningConsumer } from '../../server/platform/kafka/consumer-runner';
import { fetchConsumerLag } from '../../server/platform/kafka/lag';
import { withPrefix } from '../../server/platform/kafka/topics';
import { createCapturingLogger, type Logger } from '../../server/platform/logger';
import { OUTBOX_NAMES } from '../../server/main/outboxes';
import { createOutboxRelayJob } from '../../server/platform/outbox/outbox-relay.job';
import type { TestContext } from './harness';
import { commandContext } from '../../server/platform/command-context';

export const SAGA_CONSUMERS: ConsumerDefinition[] = [crmPropertyObjectStatusConsumer, cardProjectionConsumer, crmPropertyObjectProjectionConsumer];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value; fails with `what` (and the last value) after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 30_000, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      last = await check();
      if (last) return last as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    }
    await sleep(stepMs);
  }
}

/**
 * The relay job in a loop (what the worker's scheduler does on every NOTIFY / tick). `kafka` is the
 * client the job publishes with: the real broker, or an unreachable one for the outage scenario.
 */
export class RelayLoop {
  readonly results: JobRunResult[] = [];
  private readonly job = createOutboxRelayJob(OUTBOX_NAMES);
  private readonly abort = new AbortController();
  private stopped = false;
  private readonly loop: Promise<void>;
  readonly kafka: Kafka;

  constructor(deps: { t: TestContext; kafka: Kafka; logger?: Logger }, intervalMs = 150) {
    const { t, kafka } = deps;
    this.kafka = kafka;
    this.loop = (async () => {
      while (!this.stopped) {
        const result = await runJobCycle(this.job, { database: t.database, env: t.env, logger: deps.logger ?? t.logger, kafka, signal: this.abort.signal }, 'manual');
        this.results.push(result);
        await sleep(intervalMs);
      }
    })();
  }

  /** Ends the loop after its current cycle and releases the advisory locks and the producer. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop;
    await this.job.close?.();
  }
}

export interface SeededChessboard {
  tenantId: string;
  projectId: string;
  buildingId: string;
  objectIds: string[];
}

/** A project, a building and `count` Free objects through the chessboard commands (they write the upsert events). */
export async function seedChessboard(t: TestContext, tenantId: string, count: number): Promise<SeededChessboard> {
  const projectId = randomUUID();
  const buildingId = randomUUID();
  const objectIds = Array.from({ length: count }, () => randomUUID());
  const correlationId = randomUUID();
  await t.database.db.transaction(async (tx) => {
    await upsertProject(tx, { id: projectId, tenantId, name: 'Saga Project', city: 'Москва' }, commandContext(SYSTEM_ACTOR, correlationId));
    await upsertBuilding(tx, { id: buildingId, tenantId, projectId, name: 'Корпус 1', sections: 4, floors: 30 }, commandContext(SYSTEM_ACTOR, correlationId));
    for (const [i, id] of objectIds.entries()) {
      await upsertPropertyObject(tx, {
        id, tenantId, projectId, buildingId, section: 1 + (i % 4), floor: 1 + (Math.floor(i / 4) % 30), number: String(100 + i),
        rooms: 1 + (i % 3), area: 40 + (i % 20), price: 9_000_000 + i * 1000,
      }, commandContext(SYSTEM_ACTOR, correlationId));
    }
  });
  return { tenantId, projectId, buildingId, objectIds };
}

/**
 * Commits the earliest offset of every partition of `def`'s topics for its group (the consumers of the
 * group must be stopped). What admin.resetOffsets({ earliest: true }) does per topic, but for all topics
 * in one group generation: kafkajs's resetOffsets joins the group with a paused throwaway consumer and
 * waits for a fetch (maxWaitTime 5 s) per topic, i.e. a minute for the two groups' twelve topics.
 */
export async function resetGroupToEarliest(kafka: Kafka, admin: Admin, prefix: string, def: ConsumerDefinition): Promise<void> {
  const groupId = withPrefix(prefix, def.name);
  const topics = def.topics.map((topic) => withPrefix(prefix, topic));
  const earliest = await Promise.all(topics.map(async (topic) =>
    (await admin.fetchTopicOffsets(topic)).map((p) => ({ topic, partition: p.partition, offset: p.low }))));
  const resetter = kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 100 });
  try {
    await resetter.connect();
    // the broker may still list the members that just left for a moment: the join then rebalances
    const joined = new Promise<void>((resolve) => resetter.on(resetter.events.GROUP_JOIN, () => resolve()));
    await resetter.subscribe({ topics, fromBeginning: true });
    // nothing is resolved or auto-committed: the only commit is the one below
    await resetter.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => {} });
    resetter.pause(topics.map((topic) => ({ topic })));
    await joined;
    await resetter.commitOffsets(earliest.flat());
  } finally {
    await resetter.disconnect();
  }
}

export interface Backbone {
  kafka: Kafka;
  admin: Admin;
  /** the consumers' own capturing logger (info level): duplicates, no-ops and rejections are asserted from it */
  consumerLogLines: () => Record<string, unknown>[];
  startConsumers(): Promise<void>;
  stopConsumers(): Promise<void>;
  startRelay(kafka?: Kafka): RelayLoop;
  stopRelay(): Promise<void>;
  /** the relay loop on the real broker is running (restarted if stopped or pointed elsewhere): a test's cleanup */
  ensureLiveRelay(): Promise<void>;
  relay(): RelayLoop | undefined;
  /** committed vs end offsets of both groups (by unprefixed group name) */
  lag(): Promise<Map<string, number>>;
  /** both outboxes published and both groups without lag, checked in the order the events flow */
  settled(timeoutMs?: number): Promise<void>;
  /** resets every subscribed topic of both groups to the earliest offset (the consumers must be stopped) */
  resetOffsetsToEarliest(): Promise<void>;
  close(): Promise<void>;
}

export async function startBackbone(t: TestContext): Promise<Backbone> {
  const kafka = createKafka(t.env);
  const admin = kafka.admin();
  await admin.connect();
  const { logger: consumerLogger, lines: consumerLogLines } = createCapturingLogger('saga-consumers', 'debug');
  let running: RunningConsumer[] = [];
  let relayLoop: RelayLoop | undefined;

  const lag = async () => {
    const byGroup = new Map<string, number>();
    for (const l of await fetchConsumerLag(admin, t.env, SAGA_CONSUMERS)) byGroup.set(l.group, (byGroup.get(l.group) ?? 0) + l.lag);
    return byGroup;
  };
  const unpublished = async (outbox: 'crm' | 'chessboard') => {
    const [r] = await t.database.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${outbox}.outbox WHERE published_at IS NULL`);
    return r!.n;
  };

  const backbone: Backbone = {
    kafka,
    admin,
    consumerLogLines,
    async startConsumers() {
      running = await Promise.all(SAGA_CONSUMERS.map((def) => startConsumer(def, { database: t.database, env: t.env, logger: consumerLogger, kafka })));
    },
    async stopConsumers() {
      await Promise.all(running.map((c) => c.stop()));
      running = [];
    },
    startRelay(relayKafka = kafka) {
      if (relayLoop) throw new Error('a relay loop is already running');
      relayLoop = new RelayLoop({ t, kafka: relayKafka });
      return relayLoop;
    },
    async stopRelay() {
      await relayLoop?.stop();
      relayLoop = undefined;
    },
    async ensureLiveRelay() {
      if (relayLoop?.kafka === kafka) return;
      await backbone.stopRelay();
      backbone.startRelay();
    },
    relay: () => relayLoop,
    lag,
    async settled(timeoutMs = 30_000) {
      await eventually(async () => {
        if ((await unpublished('crm')) > 0) return false;
        if (((await lag()).get(crmPropertyObjectStatusConsumer.name) ?? 0) > 0) return false;
        if ((await unpublished('chessboard')) > 0) return false;
        const after = await lag();
        return (after.get(cardProjectionConsumer.name) ?? 0) === 0 && (after.get(crmPropertyObjectProjectionConsumer.name) ?? 0) === 0;
      }, 'both outboxes published and every consumer group at lag 0', timeoutMs);
    },
    async resetOffsetsToEarliest() {
      await Promise.all(SAGA_CONSUMERS.map((def) => resetGroupToEarliest(kafka, admin, t.env.KAFKA_TOPIC_PREFIX, def)));
    },
    async close() {
      await relayLoop?.stop().catch(() => {});
      await Promise.all(running.map((c) => c.stop().catch(() => {})));
      await admin.disconnect().catch(() => {});
    },
  };
  return backbone;
}
