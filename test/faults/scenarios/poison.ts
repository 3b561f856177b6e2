import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { contracts, eventTypes } from '../../../server/contracts';
import { CONSUMER_GROUPS } from '../../../server/contracts/consumer-groups';
import { dlqTopic, TOPICS, withPrefix } from '../../../server/platform/kafka/topics';
import type { TestContext } from '../../harness/harness';
import { figure, secondsSince } from '../helpers/figures';
import { plainKafka, readEverything } from '../helpers/kafka-read';
import { sleep, startWorker } from '../helpers/processes';
import { seedWorld } from '../helpers/world';

/**
 * Poison messages on a consumed topic, each followed on the SAME partition by a valid booking-created:
 * invalid JSON, an unknown contract version, a huge payload (> 256 KB), a contract violation and an
 * empty value. Every poison message goes to the consumer group's DLQ with its error code; the consumer
 * does not stop on it: the valid message behind it is applied and the committed offset moves past both.
 */

type Poison = { name: string; code: string; value: (valid: string) => Buffer | null };

const POISONS: Poison[] = [
  { name: 'invalid JSON', code: 'CONTRACT_INVALID_JSON', value: () => Buffer.from('{"messageId":"not json at all", oops') },
  {
    name: 'unknown contract version', code: 'CONTRACT_VERSION_UNSUPPORTED',
    value: (valid) => Buffer.from(JSON.stringify({ ...JSON.parse(valid), messageId: randomUUID(), contractVersion: 2 })),
  },
  {
    name: 'huge payload', code: 'CONTRACT_PAYLOAD_TOO_LARGE',
    value: (valid) => Buffer.from(JSON.stringify({ ...JSON.parse(valid), messageId: randomUUID(), padding: 'x'.repeat(300 * 1024) })),
  },
  {
    name: 'contract violation', code: 'CONTRACT_VIOLATION',
    value: (valid) => {
      const e = JSON.parse(valid);
      return Buffer.from(JSON.stringify({ ...e, messageId: randomUUID(), payload: { ...e.payload, propertyObjectId: 'not-a-uuid' } }));
    },
  },
  { name: 'empty value', code: 'CONTRACT_EMPTY_MESSAGE', value: () => null },
];

export async function poisonScenario(t: TestContext, opts: { rounds: number; label: string }): Promise<void> {
  const { sql } = t.database;
  const world = await seedWorld(t.database, opts.rounds);
  const topic = withPrefix(t.prefix, TOPICS.bookingCreated);
  const group = withPrefix(t.prefix, CONSUMER_GROUPS.crmPropertyObjectStatus);
  const worker = await startWorker(`poison-${t.prefix}`, { DATABASE_URL: t.url, KAFKA_BROKERS: t.env.KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: t.prefix });
  const kafka = plainKafka(t.env.KAFKA_BROKERS);
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  const admin = kafka.admin();
  await Promise.all([producer.connect(), admin.connect()]);
  const t0 = Date.now();
  try {
    const validIds: string[] = [];
    let lastValid: { partition: number; offset: string } | undefined;
    const partition = 1;
    for (let r = 0; r < opts.rounds; r++) {
      const bookingId = randomUUID();
      const now = new Date();
      const valid = JSON.stringify(contracts[TOPICS.bookingCreated].parse({
        messageId: randomUUID(), type: eventTypes[TOPICS.bookingCreated], contractVersion: 1, aggregateType: 'Booking', aggregateId: bookingId,
        occurredAt: now.toISOString(), tenantId: world.tenantId, correlationId: randomUUID(), causationId: null,
        payload: {
          bookingId, dealId: world.dealIds[r], propertyObjectId: world.objectIds[r], tenantId: world.tenantId, bookingVersion: 1, programId: world.programId,
          status: 'Reserved', reserveExpiresAt: new Date(now.getTime() + 3600_000).toISOString(), createdAt: now.toISOString(),
        },
      }));
      validIds.push(JSON.parse(valid).messageId);
      const poison = POISONS[r % POISONS.length]!;
      // the poison first, the valid message right behind it on the same partition
      await producer.send({ topic, acks: -1, messages: [{ key: bookingId, value: poison.value(valid), partition, headers: { poison: poison.name } }] });
      const [meta] = await producer.send({ topic, acks: -1, messages: [{ key: bookingId, value: valid, partition }] });
      lastValid = { partition, offset: meta!.baseOffset! };
    }

    // every valid message behind a poison one is applied
    const deadline = Date.now() + 90_000;
    for (;;) {
      const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chessboard.inbox WHERE message_id = ANY(${validIds}::uuid[]) AND result = 'applied'`;
      if (n === validIds.length) break;
      if (!worker.alive()) throw new Error(`the worker died on a poison message: ${worker.logFile}`);
      if (Date.now() > deadline) throw new Error(`only ${n}/${validIds.length} valid messages applied behind the poison ones; ${worker.logFile}`);
      await sleep(200);
    }
    // the committed offset moves past the last message (poison ones included)
    let committed = -1;
    for (let i = 0; i < 50; i++) {
      const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      committed = Number(offsets[0]!.partitions.find((p) => p.partition === partition)!.offset);
      if (committed >= Number(lastValid!.offset) + 1) break;
      await sleep(200);
    }
    const dlq = await readEverything(t.env.KAFKA_BROKERS, [withPrefix(t.prefix, dlqTopic(CONSUMER_GROUPS.crmPropertyObjectStatus))]);
    const codes = dlq.map((m) => m.headers['dlq.error.code']);
    const byCode = Object.fromEntries(POISONS.map((p) => [p.code, codes.filter((c) => c === p.code).length]));
    const [{ rejected }] = await sql<{ rejected: number }[]>`SELECT count(*)::int AS rejected FROM chessboard.inbox WHERE result = 'rejected'`;
    const [{ reserved }] = await sql<{ reserved: number }[]>`SELECT count(*)::int AS reserved FROM chessboard.property_objects WHERE project_id = ${world.projectId} AND status = 'Reserved'`;

    figure('poison', `${opts.label}: ${opts.rounds} poison messages (${POISONS.slice(0, Math.min(opts.rounds, POISONS.length)).map((p) => p.name).join(', ')}) each followed by a valid one on the same partition — `
      + `DLQ: ${dlq.length} (${Object.entries(byCode).map(([c, n]) => `${c} ${n}`).join(', ')}), consumer continued: ${validIds.length}/${validIds.length} valid messages applied, `
      + `committed offset ${committed} = last offset + 1, worker alive: ${worker.alive()} (${secondsSince(t0)} s)`,
    { rounds: opts.rounds, dlq: dlq.length, byCode, applied: validIds.length, committed });

    expect(dlq).toHaveLength(opts.rounds);
    for (const [i, m] of dlq.entries()) {
      expect(m.headers['dlq.original.topic']).toBe(topic);
      expect(m.headers['dlq.consumer']).toBe(CONSUMER_GROUPS.crmPropertyObjectStatus);
      expect(codes[i]).toBe(POISONS.find((p) => p.name === m.headers.poison)!.code);
    }
    expect(committed).toBe(Number(lastValid!.offset) + 1);
    expect(reserved).toBe(opts.rounds);
    // a poison message whose envelope could be read (version, contract) is also marked rejected in the inbox
    expect(rejected).toBe(dlq.filter((m) => ['CONTRACT_VERSION_UNSUPPORTED', 'CONTRACT_VIOLATION'].includes(m.headers['dlq.error.code']!)).length);
    expect(worker.alive()).toBe(true);
  } finally {
    await producer.disconnect().catch(() => {});
    await admin.disconnect().catch(() => {});
    await worker.stop();
  }
}
