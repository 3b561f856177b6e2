import { randomUUID } from 'node:crypto';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contracts, eventTypes } from '../../contracts';
import { createKafka, toHeaders } from '../../platform/kafka/client';
import { TOPICS, withPrefix } from '../../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { syncDlqMessages, toDlqRow } from './dlq';
import { closeOpsKafka } from './kafka-admin';
import { estimateConsumerTimeLag } from './messaging-queries';
import { actorOf, auditRows, errorOf, insertOutboxRow, insertWorld, MIN, opsCaller } from '../../../test/fixtures/ops-dashboard.fixtures';

let t: TestContext;
let kafka: Kafka;
let admin: Admin;
let producer: Producer;
beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  kafka = createKafka(t.env);
  admin = kafka.admin();
  producer = kafka.producer();
  await Promise.all([admin.connect(), producer.connect()]);
});
afterAll(async () => {
  await Promise.allSettled([admin?.disconnect(), producer?.disconnect()]);
  await closeOpsKafka();
  await t?.close();
});
beforeEach(async () => {
  await t.database.sql`TRUNCATE ops.audit_log, chessboard.hold_mismatches, chessboard.inbox, catalog.inbox, chessboard.outbox, crm.outbox CASCADE`;
});

const topic = (name: string) => withPrefix(t.prefix, name);
const CHESSBOARD_GROUP = 'chessboard.crm-property-object-status';
const CATALOG_GROUP = 'catalog.card-projection';

async function partitionWith(topicName: string, key: string): Promise<number> {
  // every message of one key lands on one partition: find it from the watermarks
  const offsets = await admin.fetchTopicOffsets(topicName);
  const busy = offsets.filter((o) => Number(o.high) > 0);
  expect(busy).toHaveLength(1);
  void key;
  return busy[0]!.partition;
}

/** A crm envelope the chessboard consumer would reject, as the consumer runner writes it to its DLQ. */
function dlqRecord(opts: { code: string; tenantId: string; messageId?: string; bookingId?: string; originalTopic?: string; failedAt?: string }) {
  const messageId = opts.messageId ?? randomUUID();
  const bookingId = opts.bookingId ?? randomUUID();
  const envelope = contracts[TOPICS.bookingCancelled].parse({
    messageId, type: eventTypes[TOPICS.bookingCancelled], contractVersion: 1, aggregateType: 'Booking', aggregateId: bookingId,
    occurredAt: new Date().toISOString(), tenantId: opts.tenantId, correlationId: randomUUID(), causationId: null,
    payload: { bookingId, dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId: opts.tenantId, bookingVersion: 2, fromStatus: 'Reserved', reason: 'r', cancelledAt: new Date().toISOString() },
  });
  return {
    messageId,
    bookingId,
    message: {
      key: bookingId,
      value: JSON.stringify(envelope),
      headers: toHeaders({
        correlationId: envelope.correlationId,
        'dlq.error.code': opts.code,
        'dlq.error.message': 'INV-CHS-003: release by deal X, object held by deal Y',
        'dlq.original.topic': opts.originalTopic ?? topic(TOPICS.bookingCancelled),
        'dlq.original.partition': 1,
        'dlq.original.offset': '42',
        'dlq.consumer': CHESSBOARD_GROUP,
        'dlq.failed_at': opts.failedAt ?? new Date().toISOString(),
      }),
    },
  };
}

describe('consumer lag', () => {
  it('per group and topic: committed offset, end offset and lag (kafkajs admin), and how old the oldest unprocessed message is', async () => {
    const key = randomUUID();
    const projectTopic = topic(TOPICS.projectUpserted);
    await producer.send({ topic: projectTopic, messages: Array.from({ length: 5 }, (_, i) => ({ key, value: `m${i}` })) });
    const partition = await partitionWith(projectTopic, key);

    const lagOf = async () => {
      const m = await opsCaller(t, actorOf('ops')).messaging();
      expect(m.kafkaError).toBeNull();
      return m.consumers!.find((c) => c.group === CATALOG_GROUP)!;
    };
    // the group never committed: everything retained counts
    let g = await lagOf();
    let row = g.topics.find((x) => x.topic === TOPICS.projectUpserted)!;
    expect(row).toMatchObject({ committed: 0, end: 5, lag: 5 });
    expect(row.partitions.find((p) => p.partition === partition)).toEqual({ partition, committed: null, end: 5, lag: 5 });
    expect(g.lag).toBe(5);

    await admin.setOffsets({ groupId: withPrefix(t.prefix, CATALOG_GROUP), topic: projectTopic, partitions: [{ partition, offset: '3' }] });
    g = await lagOf();
    row = g.topics.find((x) => x.topic === TOPICS.projectUpserted)!;
    expect(row).toMatchObject({ committed: 3, end: 5, lag: 2 });
    expect(g.lag).toBe(2);
    const other = (await opsCaller(t, actorOf('ops')).messaging()).consumers!.find((c) => c.group === CHESSBOARD_GROUP)!;
    expect(other.lag).toBe(0);
    expect(other.estimatedLagMs).toBeNull();
  });

  it('estimates the time lag from published outbox rows that the group\'s inbox has not recorded', async () => {
    const now = new Date('2026-06-01T12:00:00Z');
    const processed = await insertOutboxRow(t.database, 'chessboard', { createdAt: new Date(now.getTime() - 20 * MIN), publishedAt: new Date(now.getTime() - 19 * MIN), topic: TOPICS.projectUpserted });
    await t.database.sql`INSERT INTO catalog.inbox (consumer, message_id, topic, result) VALUES (${CATALOG_GROUP}, ${processed}, ${TOPICS.projectUpserted}, 'applied')`;
    await insertOutboxRow(t.database, 'chessboard', { createdAt: new Date(now.getTime() - 8 * MIN), publishedAt: new Date(now.getTime() - 7 * MIN), topic: TOPICS.projectUpserted });
    await insertOutboxRow(t.database, 'chessboard', { createdAt: new Date(now.getTime() - MIN), publishedAt: null, topic: TOPICS.projectUpserted });
    const input = { now, group: CATALOG_GROUP, inbox: 'catalog' as const, topics: [TOPICS.projectUpserted, TOPICS.propertyObjectUpserted] };
    expect(await estimateConsumerTimeLag(t.database.db, input)).toBe(7 * MIN);
    await t.database.sql`INSERT INTO catalog.inbox (consumer, message_id, topic, result)
      SELECT ${CATALOG_GROUP}, message_id, topic, 'rejected' FROM chessboard.outbox WHERE published_at IS NOT NULL ON CONFLICT DO NOTHING`;
    expect(await estimateConsumerTimeLag(t.database.db, input)).toBeNull();
  });
});

describe('DLQ', () => {
  it('reads the DLQ records with their error code, original topic/key/payload and first/last seen; size = records − decided', async () => {
    const w = await insertWorld(t.database, 'A');
    const dlq = topic(`${CHESSBOARD_GROUP}.dlq`);
    const first = dlqRecord({ code: 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH', tenantId: w.tenantId, failedAt: '2026-06-01T10:00:00.000Z' });
    // the same message failed again later (e.g. after a requeue): one more record with the same messageId
    const again = dlqRecord({ code: 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH', tenantId: w.tenantId, messageId: first.messageId, bookingId: first.bookingId, failedAt: '2026-06-01T11:00:00.000Z' });
    const other = dlqRecord({ code: 'CONTRACT_VIOLATION', tenantId: w.tenantId, failedAt: '2026-06-01T09:00:00.000Z' });
    await producer.send({ topic: dlq, messages: [first.message, again.message, other.message] });
    const objectId = randomUUID();
    const eventDeal = randomUUID();
    const holdDeal = randomUUID();
    await t.database.sql`INSERT INTO chessboard.hold_mismatches (property_object_id, tenant_id, booking_id, message_id, topic, event_deal_id, hold_deal_id, object_status, detail)
      VALUES (${objectId}, ${w.tenantId}, ${first.bookingId}, ${first.messageId}, ${TOPICS.bookingCancelled}, ${eventDeal}, ${holdDeal}, 'Reserved', 'release by another deal')`;

    const c = opsCaller(t, actorOf('ops'));
    const before = await c.messaging();
    expect(before.dlq!.find((d) => d.group === CHESSBOARD_GROUP)).toMatchObject({ retained: 3, decided: 0, size: 3 });

    const { rows, syncError } = await c.dlqMessages();
    expect(syncError).toBeNull();
    expect(rows).toHaveLength(3);
    expect(rows.filter((r) => r.messageId === first.messageId)).toHaveLength(2);
    const mismatch = rows.find((r) => r.messageId === first.messageId)!;
    expect(mismatch).toMatchObject({
      consumerGroup: CHESSBOARD_GROUP, errorCode: 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH', originalTopic: topic(TOPICS.bookingCancelled),
      originalPartition: 1, originalOffset: '42', key: first.bookingId, aggregateId: first.bookingId, tenantId: w.tenantId,
      firstSeenAt: new Date('2026-06-01T10:00:00.000Z'), lastSeenAt: new Date('2026-06-01T11:00:00.000Z'), occurrences: 2,
      holdMismatch: { propertyObjectId: objectId, bookingId: first.bookingId, eventDealId: eventDeal, holdDealId: holdDeal, objectStatus: 'Reserved', detail: 'release by another deal' },
    });
    expect(JSON.parse(mismatch.value!).messageId).toBe(first.messageId);
    expect(mismatch.headers).toHaveProperty('correlationId');
    expect(Object.keys(mismatch.headers).some((k) => k.startsWith('dlq.'))).toBe(false);
    expect(rows.find((r) => r.errorCode === 'CONTRACT_VIOLATION')!.holdMismatch).toBeNull();

    // a second read finds nothing new (no consumer started) and keeps the cache
    expect(await syncDlqMessages(t.database.db, t.env)).toEqual({ read: 0, topics: 0, partial: false });

    // a scoped viewer sees only its tenant's records
    expect((await opsCaller(t, actorOf('viewer', randomUUID())).dlqMessages()).rows).toEqual([]);
    expect((await opsCaller(t, actorOf('viewer', w.tenantId)).dlqMessages()).rows).toHaveLength(3);
  });

  it('discard records the decision with its reason, hides the record and shrinks the DLQ size; a second decision is a CONFLICT', async () => {
    const w = await insertWorld(t.database, 'A');
    const rec = dlqRecord({ code: 'CONTRACT_VIOLATION', tenantId: w.tenantId });
    await producer.send({ topic: topic(`${CHESSBOARD_GROUP}.dlq`), messages: [rec.message] });
    const ops = actorOf('ops');
    const c = opsCaller(t, ops);
    const row = (await c.dlqMessages()).rows.find((r) => r.messageId === rec.messageId)!;
    const sizeBefore = (await c.messaging()).dlq!.find((d) => d.group === CHESSBOARD_GROUP)!;
    const ref = { topic: row.topic, partition: row.partition, offset: row.offset };
    expect((await errorOf(c.discardDlq({ ...ref, reason: '' }))).code).toBe('BAD_REQUEST');
    await c.discardDlq({ ...ref, reason: 'producer bug fixed; payload obsolete' });
    expect((await c.dlqMessages()).rows.map((r) => r.messageId)).not.toContain(rec.messageId);
    const decided = (await c.dlqMessages({ includeDecided: true })).rows.filter((r) => r.messageId === rec.messageId);
    expect(decided).toEqual([expect.objectContaining({ decision: 'discarded', decidedBy: ops.userId, decisionReason: 'producer bug fixed; payload obsolete' })]);
    const sizeAfter = (await c.messaging()).dlq!.find((d) => d.group === CHESSBOARD_GROUP)!;
    expect(sizeAfter).toMatchObject({ retained: sizeBefore.retained, decided: sizeBefore.decided + 1, size: sizeBefore.size - 1 });
    expect(await auditRows(t.database, 'ops.dlq.discard')).toEqual([expect.objectContaining({ actor_id: ops.userId, reason: 'producer bug fixed; payload obsolete' })]);
    const again = await errorOf(c.requeueDlq({ ...ref, reason: 'retry' }));
    expect(again.code).toBe('CONFLICT');
    expect((await errorOf(c.discardDlq({ ...ref, offset: ref.offset + 1000, reason: 'x' }))).code).toBe('NOT_FOUND');
  });

  it('requeue produces the original key/value/headers to the original topic, frees the inbox\'s rejected record so it is retried, resolves the mismatch and records the decision', async () => {
    const w = await insertWorld(t.database, 'A');
    const original = topic(TOPICS.bookingCancelled);
    const rec = dlqRecord({ code: 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH', tenantId: w.tenantId, originalTopic: original });
    await producer.send({ topic: topic(`${CHESSBOARD_GROUP}.dlq`), messages: [rec.message] });
    await t.database.sql`INSERT INTO chessboard.inbox (consumer, message_id, topic, result, detail) VALUES (${CHESSBOARD_GROUP}, ${rec.messageId}, ${TOPICS.bookingCancelled}, 'rejected', 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH')`;
    await t.database.sql`INSERT INTO chessboard.hold_mismatches (property_object_id, tenant_id, message_id, topic, object_status) VALUES (${randomUUID()}, ${w.tenantId}, ${rec.messageId}, ${TOPICS.bookingCancelled}, 'Reserved')`;
    const before = await admin.fetchTopicOffsets(original);
    const ops = actorOf('ops');
    const c = opsCaller(t, ops);
    const row = (await c.dlqMessages()).rows.find((r) => r.messageId === rec.messageId);
    const sizeBefore = (await c.messaging()).dlq!.find((d) => d.group === CHESSBOARD_GROUP)!.size;
    const res = await c.requeueDlq({ topic: row!.topic, partition: row!.partition, offset: row!.offset, reason: 'the other deal was released by hand' });
    expect(res).toEqual({ originalTopic: original, messageId: rec.messageId });

    const after = await admin.fetchTopicOffsets(original);
    const grown = after.filter((p) => Number(p.high) > Number(before.find((b) => b.partition === p.partition)!.high));
    expect(grown).toHaveLength(1);
    // read the requeued copy back: same key, value and headers (plus where it came from)
    const reader = kafka.consumer({ groupId: withPrefix(t.prefix, `test-reader-${randomUUID()}`) });
    await reader.connect();
    await reader.subscribe({ topic: original, fromBeginning: true });
    const got = await new Promise<{ key: string; value: string; headers: Record<string, string> }>((resolve) => {
      void reader.run({
        eachMessage: async ({ message }) => resolve({
          key: message.key!.toString(), value: message.value!.toString(),
          headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])),
        }),
      });
    });
    await reader.disconnect();
    expect(got.key).toBe(rec.bookingId);
    expect(got.value).toBe(rec.message.value);
    expect(got.headers.correlationId).toBe(rec.message.headers.correlationId);
    expect(got.headers['ops.requeued-from']).toBe(`${row!.topic}/${row!.partition}/${row!.offset}`);
    expect(Object.keys(got.headers).some((k) => k.startsWith('dlq.'))).toBe(false);

    expect(await t.database.sql`SELECT 1 FROM chessboard.inbox WHERE message_id = ${rec.messageId}`).toHaveLength(0);
    const [mm] = await t.database.sql`SELECT resolved_at FROM chessboard.hold_mismatches WHERE message_id = ${rec.messageId}`;
    expect(mm!.resolved_at).not.toBeNull();
    expect((await c.dlqMessages()).rows.map((r) => r.messageId)).not.toContain(rec.messageId);
    expect((await c.messaging()).dlq!.find((d) => d.group === CHESSBOARD_GROUP)!.size).toBe(sizeBefore - 1);
    expect(await auditRows(t.database, 'ops.dlq.requeue')).toEqual([expect.objectContaining({
      actor_id: ops.userId, reason: 'the other deal was released by hand', details: expect.objectContaining({ originalTopic: original, messageId: rec.messageId }),
    })]);
  });
});

describe('DLQ bulk decisions', () => {
  it('requeue many: each selected record is produced once to its topic and decided; one decided meanwhile is reported, the rest go on', async () => {
    const w = await insertWorld(t.database, 'A');
    const foreign = await insertWorld(t.database, 'B');
    const original = topic(TOPICS.bookingCancelled);
    const recs = [0, 1, 2].map(() => dlqRecord({ code: 'CONTRACT_VIOLATION', tenantId: w.tenantId, originalTopic: original }));
    const theirs = dlqRecord({ code: 'CONTRACT_VIOLATION', tenantId: foreign.tenantId, originalTopic: original });
    await producer.send({ topic: topic(`${CHESSBOARD_GROUP}.dlq`), messages: [...recs, theirs].map((r) => r.message) });
    const ops = actorOf('ops');
    const all = (await opsCaller(t, ops).dlqMessages()).rows;
    const refOf = (messageId: string) => {
      const r = all.find((x) => x.messageId === messageId)!;
      return { topic: r.topic, partition: r.partition, offset: r.offset };
    };
    // the second one is discarded by someone else before the bulk runs
    await opsCaller(t, ops).discardDlq({ ...refOf(recs[1]!.messageId), reason: 'obsolete' });
    const before = await admin.fetchTopicOffsets(original);

    const refs = [...recs, theirs].map((r) => refOf(r.messageId));
    // only ops decide (as for one record); a developer manager is refused and nothing is decided
    expect((await errorOf(opsCaller(t, actorOf('developer_manager', w.tenantId)).requeueDlqMany({ refs, reason: 'retry' }))).code).toBe('FORBIDDEN');
    const result = await opsCaller(t, ops).requeueDlqMany({ refs: refs.slice(0, 3), reason: 'consumer fixed, retry all' });
    expect(result.map((o) => [o.ok, o.code])).toEqual([[true, null], [false, 'OPS_DLQ_MESSAGE_ALREADY_DECIDED'], [true, null]]);
    const after = await admin.fetchTopicOffsets(original);
    const produced = after.reduce((n, p) => n + Number(p.high) - Number(before.find((b) => b.partition === p.partition)!.high), 0);
    expect(produced).toBe(2);
    const decided = (await opsCaller(t, ops).dlqMessages({ includeDecided: true })).rows.filter((r) => recs.some((x) => x.messageId === r.messageId));
    expect(decided.map((r) => r.decision).sort()).toEqual(['discarded', 'requeued', 'requeued']);
    expect(await auditRows(t.database, 'ops.dlq.requeue')).toHaveLength(2);

    // discard many; bad input is a typed error and decides nothing
    expect((await errorOf(opsCaller(t, ops).discardDlqMany({ refs: [], reason: 'x' }))).code).toBe('BAD_REQUEST');
    expect((await errorOf(opsCaller(t, ops).discardDlqMany({ refs: [refOf(theirs.messageId)], reason: ' ' }))).code).toBe('BAD_REQUEST');
    const discarded = await opsCaller(t, ops).discardDlqMany({ refs: [refOf(theirs.messageId), { ...refOf(theirs.messageId), offset: 999_999 }], reason: 'payload obsolete' });
    expect(discarded.map((o) => [o.ok, o.code])).toEqual([[true, null], [false, 'OPS_DLQ_MESSAGE_NOT_FOUND']]);
    expect((await opsCaller(t, ops).dlqMessages()).rows.map((r) => r.messageId)).not.toContain(theirs.messageId);
  });
});

describe('toDlqRow', () => {
  it('keeps an unparseable message (no envelope) with its error code', () => {
    const row = toDlqRow('g', 'p.g.dlq', 0, { key: null, value: Buffer.from('{not json'), offset: '7', headers: { 'dlq.error.code': Buffer.from('CONTRACT_INVALID_JSON') } });
    expect(row).toMatchObject({ offset: 7, consumerGroup: 'g', errorCode: 'CONTRACT_INVALID_JSON', messageId: null, tenantId: null, value: '{not json', failedAt: null });
  });
});
