import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { readTopics, waitFor } from '../../../test/harness/kafka';
import { createKafka, createIdempotentProducer } from './client';
import { RejectMessage, startConsumer, type ConsumerDefinition, type RunningConsumer } from './consumer-runner';
import { TOPICS, dlqTopic, ensureNamedTopics, withPrefix } from './topics';
import { fetchConsumerLag } from './lag';

/**
 * The shared runner through the real broker: inbox dedup, DLQ for poison and rejected messages,
 * transient errors retried in place, offsets committed after the database commit.
 */
let t: TestContext;
let producer: Producer;
let running: RunningConsumer | undefined;
const applied: string[] = [];
let failNext = 0;
const GROUP = 'test.runner';

const def: ConsumerDefinition = {
  name: GROUP,
  inbox: 'chessboard',
  topics: [TOPICS.bookingCreated],
  async handle(tx, msg) {
    const p = msg.envelope.payload as { bookingId: string; bookingVersion: number };
    if (failNext > 0) {
      failNext--;
      throw new Error('simulated transient failure (database unavailable)');
    }
    if (p.bookingVersion === 99) {
      throw new RejectMessage('TEST_REJECTED', 'never succeeds', async (rtx) => {
        await rtx.execute(sql`INSERT INTO ops.audit_log (actor_id, action, target_type, target_id) VALUES ('test', 'rejected', 'booking', ${p.bookingId})`);
      });
    }
    // a write in the handler's transaction: must commit together with the inbox row
    await tx.execute(sql`INSERT INTO ops.audit_log (actor_id, action, target_type, target_id) VALUES ('test', 'applied', 'booking', ${p.bookingId})`);
    applied.push(msg.envelope.messageId);
    return { result: 'applied' };
  },
};

function envelope(bookingId: string, version: number, messageId = randomUUID()) {
  const tenantId = randomUUID();
  return {
    messageId, type: 'BookingCreated', contractVersion: 1, aggregateType: 'Booking', aggregateId: bookingId,
    occurredAt: new Date().toISOString(), tenantId, correlationId: randomUUID(), causationId: null,
    payload: {
      bookingId, dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId, bookingVersion: version, programId: randomUUID(),
      status: 'Reserved', reserveExpiresAt: new Date().toISOString(), createdAt: new Date().toISOString(),
    },
  };
}

const topic = () => withPrefix(t.prefix, TOPICS.bookingCreated);
const send = (key: string, value: string | Buffer) => producer.send({ topic: topic(), messages: [{ key, value }] });

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  const kafka = createKafka(t.env);
  const admin = kafka.admin();
  await admin.connect();
  await ensureNamedTopics(admin, [withPrefix(t.prefix, dlqTopic(GROUP))], 1);
  await admin.disconnect();
  producer = createIdempotentProducer(kafka);
  await producer.connect();
  running = await startConsumer(def, { database: t.database, env: t.env, logger: t.logger, kafka });
});
afterAll(async () => {
  await running?.stop();
  await producer?.disconnect();
  await t?.close();
});

describe('consumer runner', () => {
  it('applies a message once: a duplicate messageId is a no-op', async () => {
    const env = envelope(randomUUID(), 1);
    await send(env.aggregateId, JSON.stringify(env));
    await send(env.aggregateId, JSON.stringify(env));
    // same key → same partition: once the marker is committed, both copies before it were handled
    const marker = envelope(env.aggregateId, 1);
    await send(marker.aggregateId, JSON.stringify(marker));
    await waitFor(async () => (await t.database.sql`SELECT 1 FROM chessboard.inbox WHERE message_id = ${marker.messageId}`).length > 0);
    expect(applied.filter((id) => id === env.messageId)).toHaveLength(1);
    const rows = await t.database.sql`SELECT result FROM chessboard.inbox WHERE consumer = ${GROUP} AND message_id = ${env.messageId}`;
    expect(rows).toEqual([{ result: 'applied' }]);
  });

  it('sends poison (invalid JSON, unknown contract version, wrong contract, huge payload) to the DLQ and goes on', async () => {
    const key = randomUUID();
    const badVersion = { ...envelope(key, 1), contractVersion: 2 };
    const wrongShape = { ...envelope(key, 1), payload: { nope: true } };
    await send(key, '{not json');
    await send(key, JSON.stringify(badVersion));
    await send(key, JSON.stringify(wrongShape));
    await send(key, Buffer.alloc(300 * 1024, 'x'));
    const next = envelope(randomUUID(), 1);
    await send(next.aggregateId, JSON.stringify(next));
    await waitFor(async () => applied.includes(next.messageId));

    const dlq = await readTopics(createKafka(t.env), [withPrefix(t.prefix, dlqTopic(GROUP))], (all) => all.filter((m) => m.key === key).length >= 4);
    const codes = dlq.filter((m) => m.key === key).map((m) => m.headers['dlq.error.code']);
    expect(codes).toEqual(['CONTRACT_INVALID_JSON', 'CONTRACT_VERSION_UNSUPPORTED', 'CONTRACT_VIOLATION', 'CONTRACT_PAYLOAD_TOO_LARGE']);
    const first = dlq.find((m) => m.key === key)!;
    expect(first.value).toBe('{not json'); // the original message travels unchanged
    expect(first.headers['dlq.original.topic']).toBe(topic());
    expect(first.headers['dlq.consumer']).toBe(GROUP);
  });

  it('a business rejection goes to the DLQ, is recorded as rejected with its record, and writes nothing else', async () => {
    const env = envelope(randomUUID(), 99);
    await send(env.aggregateId, JSON.stringify(env));
    const row = await waitFor(async () => (await t.database.sql`SELECT result, detail FROM chessboard.inbox WHERE message_id = ${env.messageId}`)[0]);
    expect(row).toEqual({ result: 'rejected', detail: 'TEST_REJECTED' });
    const audit = await t.database.sql`SELECT action FROM ops.audit_log WHERE target_id = ${env.aggregateId}`;
    expect(audit.map((a) => a.action)).toEqual(['rejected']);
    const dlq = await readTopics(createKafka(t.env), [withPrefix(t.prefix, dlqTopic(GROUP))], (all) => all.some((m) => m.headers.messageId === env.messageId || m.key === env.aggregateId));
    expect(dlq.find((m) => m.key === env.aggregateId)?.headers['dlq.error.code']).toBe('TEST_REJECTED');
  });

  it('retries a transient failure in place (no DLQ) and applies the message once', async () => {
    failNext = 2;
    const env = envelope(randomUUID(), 1);
    await send(env.aggregateId, JSON.stringify(env));
    await waitFor(async () => applied.includes(env.messageId), 30_000);
    expect(applied.filter((id) => id === env.messageId)).toHaveLength(1);
    // `applied` is filled inside the handler's transaction: wait for its commit (the inbox row commits with it)
    await waitFor(async () => (await t.database.sql`SELECT 1 FROM chessboard.inbox WHERE message_id = ${env.messageId}`)[0]);
    const audit = await t.database.sql`SELECT count(*)::int AS n FROM ops.audit_log WHERE target_id = ${env.aggregateId}`;
    expect(audit[0].n).toBe(1); // the failed attempts rolled back their writes
  });

  it('commits the group offset only after the database commit', async () => {
    const env = envelope(randomUUID(), 1);
    await send(env.aggregateId, JSON.stringify(env));
    await waitFor(async () => applied.includes(env.messageId));
    const admin = createKafka(t.env).admin();
    await admin.connect();
    const committed = await waitFor(async () => {
      const offsets = await admin.fetchOffsets({ groupId: withPrefix(t.prefix, GROUP), topics: [topic()] });
      const ends = await admin.fetchTopicOffsets(topic());
      const c = offsets[0].partitions.reduce((s, p) => s + Math.max(0, Number(p.offset)), 0);
      const e = ends.reduce((s, p) => s + Number(p.offset), 0);
      return c === e ? { c, e } : null;
    });
    await admin.disconnect();
    expect(committed.c).toBe(committed.e); // lag 0: every message, poison included, was acknowledged
  });

  it('reports lag per group: 0 for the running consumer, the backlog for a group that is not consuming', async () => {
    const admin = createKafka(t.env).admin();
    await admin.connect();
    const idle: ConsumerDefinition = { ...def, name: 'test.idle', topics: [TOPICS.bookingCreated] };
    const before = await fetchConsumerLag(admin, t.env, [idle]);
    const env = envelope(randomUUID(), 1);
    await send(env.aggregateId, JSON.stringify(env));
    await waitFor(async () => applied.includes(env.messageId));
    const lags = await waitFor(async () => {
      const l = await fetchConsumerLag(admin, t.env, [def, idle]);
      return l.filter((x) => x.group === GROUP).every((x) => x.lag === 0) ? l : null;
    });
    await admin.disconnect();
    const idleLag = lags.filter((l) => l.group === 'test.idle').reduce((s, l) => s + l.lag, 0);
    expect(idleLag).toBe(before.reduce((s, l) => s + l.lag, 0) + 1);
  });
});
