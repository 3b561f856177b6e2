import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../test/fixtures/chessboard.fixtures';
import { SYSTEM_ACTOR } from '../auth/actor';
import { deletePropertyObject, upsertBuilding, upsertProject, upsertPropertyObject } from '../chessboard/commands';
import type { ChessboardPayload, ChessboardTopic } from '../contracts/chessboard';
import { dlqTopic, TOPICS, withPrefix } from '../platform/kafka/topics';
import { writeOutbox } from '../platform/outbox/write';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { startBrokerPipeline, type BrokerPipeline } from '../../test/harness/kafka';
import { actor, callerFor, crmRowCounts, expectTrpcError, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { crmPropertyObjectProjectionConsumer } from './property-object-projection.consumer';
import { commandContext } from '../platform/command-context';

/**
 * crm's projection of property objects (DESIGN decision 8) through the real broker: chessboard's
 * commands write their events to chessboard.outbox → relay → Kafka → crm.property-object-projection
 * (crm.inbox) → crm.property_objects, and booking.create answers from it.
 */

let t: TestContext;
let pipe: BrokerPipeline;
const TENANT = randomUUID();
const projectId = randomUUID();
const buildingId = randomUUID();
let program: { id: string };
const agent = actor('agent', TENANT);

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  pipe = await startBrokerPipeline(t, 'chessboard', crmPropertyObjectProjectionConsumer);
  await t.database.db.transaction(async (tx) => {
    await upsertProject(tx, { id: projectId, tenantId: TENANT, name: 'Projection', city: 'Москва' }, commandContext(SYSTEM_ACTOR));
    await upsertBuilding(tx, { id: buildingId, tenantId: TENANT, projectId, name: 'B', sections: 2, floors: 9 }, commandContext(SYSTEM_ACTOR));
  });
  program = await insertProgram(t, TENANT);
}, 120_000);

afterAll(async () => {
  await pipe?.close();
  await t?.close();
});

let objectNo = 0;
async function newObject(status: 'Free' | 'Hidden' = 'Free'): Promise<string> {
  const id = randomUUID();
  objectNo++;
  await t.database.db.transaction((tx) => upsertPropertyObject(tx, {
    id, tenantId: TENANT, projectId, buildingId, section: 1, floor: 1 + (objectNo % 9), number: String(500 + objectNo), rooms: 2, area: 50, price: 9_000_000, status,
  }, commandContext(SYSTEM_ACTOR)));
  return id;
}

const publish = () => pipe.drain();

async function viewOf(id: string) {
  const [row] = await t.database.sql<{ tenant_id: string; project_id: string; status: string; deleted: boolean; source_version: number }[]>`
    SELECT tenant_id, project_id, status, deleted, source_version FROM crm.property_objects WHERE id = ${id}`;
  return row;
}

async function inboxOf(messageId: string) {
  const [row] = await t.database.sql<{ result: string; detail: string | null }[]>`
    SELECT result, detail FROM crm.inbox WHERE consumer = ${crmPropertyObjectProjectionConsumer.name} AND message_id = ${messageId}`;
  return row;
}
const processed = (messageId: string) => eventually(() => inboxOf(messageId), 60_000, `crm.inbox row of ${messageId}`);

const priceOf = async (id: string) => (await t.database.sql<{ p: number | null }[]>`SELECT price::float8 AS p FROM crm.property_objects WHERE id = ${id}`)[0]?.p ?? null;
const layoutOf = async (id: string) => (await t.database.sql<{ floor: number | null; rooms: number | null }[]>`SELECT floor, rooms FROM crm.property_objects WHERE id = ${id}`)[0];

/** A chessboard event written by hand (as chessboard would), to order them as the broker may deliver them. */
async function writeChessboard<T extends ChessboardTopic>(topic: T, payload: ChessboardPayload<T>): Promise<string> {
  const p = payload as { propertyObjectId: string; tenantId: string };
  return t.database.db.transaction((tx) => writeOutbox(tx, 'chessboard', {
    topic, aggregateType: 'PropertyObject', aggregateId: p.propertyObjectId, tenantId: p.tenantId, payload: payload as never, correlationId: randomUUID(),
  }));
}

const upserted = (id: string, version: number, status: 'Free' | 'Hidden' | 'Sold', at: Date): ChessboardPayload<typeof TOPICS.propertyObjectUpserted> => ({
  propertyObjectId: id, tenantId: TENANT, projectId, buildingId, number: '1', floor: 1, section: 1, rooms: 1, area: 30, price: 1, status, version, updatedAt: at.toISOString(),
});
const statusChanged = (id: string, version: number, from: 'Free' | 'Reserved' | 'Booked' | 'Sold' | 'Hidden', to: typeof from, at: Date): ChessboardPayload<typeof TOPICS.propertyObjectStatusChanged> => ({
  propertyObjectId: id, tenantId: TENANT, projectId, buildingId, fromStatus: from, toStatus: to, statusSource: 'Manual',
  reservedUntil: null, bookedUntil: null, holdDealId: null, soldAt: to === 'Sold' ? at.toISOString() : null, statusChangedAt: at.toISOString(), version,
});

describe('crm.property-object-projection through Kafka', () => {
  it('an object created in chessboard becomes bookable in crm once its upsert is consumed (before: NOT_FOUND, nothing written)', async () => {
    const id = await newObject();
    // not consumed yet (the relay has not published): crm does not know the object — the projection's lag
    const deal = await insertDeal(t, TENANT);
    const before = await crmRowCounts(t);
    await expectTrpcError(callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: id, programId: program.id }), 'NOT_FOUND', 'CRM_PROPERTY_OBJECT_NOT_FOUND');
    expect(await crmRowCounts(t)).toEqual(before);

    await publish();
    expect(await eventually(() => viewOf(id), 60_000, 'crm view of the object')).toEqual({ tenant_id: TENANT, project_id: projectId, status: 'Free', deleted: false, source_version: 1 });
    // the price goes with the upsert (a programme's percentage reward is computed from it)
    expect(await priceOf(id)).toBe(9_000_000);
    // and so do the floor and room count (the reports split sales by them)
    expect(await layoutOf(id)).toEqual({ floor: 1 + (objectNo % 9), rooms: 2 });
    const booking = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: id, programId: program.id });
    expect(booking.status).toBe('Reserved');
  });

  it('hide (status-changed) → CRM_BOOKING_PROPERTY_OBJECT_HIDDEN; delete → NOT_FOUND like a random id', async () => {
    const hidden = await newObject('Hidden');
    const deleted = await newObject();
    await publish();
    await eventually(async () => (await viewOf(hidden))?.status === 'Hidden' && (await viewOf(deleted))?.status === 'Free', 60_000, 'both objects in crm');
    await t.database.db.transaction((tx) => deletePropertyObject(tx, { propertyObjectId: deleted }, commandContext(SYSTEM_ACTOR)));
    await publish();
    await eventually(async () => (await viewOf(deleted))?.deleted, 60_000, 'the deletion in crm');

    const deal = await insertDeal(t, TENANT);
    await expectTrpcError(callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: hidden, programId: program.id }), 'CONFLICT', 'CRM_BOOKING_PROPERTY_OBJECT_HIDDEN');
    await expectTrpcError(callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: deleted, programId: program.id }), 'NOT_FOUND', 'CRM_PROPERTY_OBJECT_NOT_FOUND');
  });

  it('events across the three topics out of order: a newer status change first, the older upsert after it is a no-op', async () => {
    const id = randomUUID();
    const t0 = Date.now() - 60_000;
    // each published and consumed before the next is written: the order of consumption is the test's
    const sold = await writeChessboard(TOPICS.propertyObjectStatusChanged, statusChanged(id, 3, 'Booked', 'Sold', new Date(t0 + 3000)));
    await publish();
    expect(await processed(sold)).toEqual({ result: 'applied', detail: null });
    const old = await writeChessboard(TOPICS.propertyObjectUpserted, upserted(id, 1, 'Free', new Date(t0)));
    await publish();
    expect(await processed(old)).toMatchObject({ result: 'no-op', detail: expect.stringContaining('stale') });
    expect(await viewOf(id)).toMatchObject({ status: 'Sold', source_version: 3, deleted: false });
    // the stale upsert changes no status but fills the price the view did not have yet
    expect(await priceOf(id)).toBe(1);
    expect(await layoutOf(id)).toEqual({ floor: 1, rooms: 1 });

    const deal = await insertDeal(t, TENANT);
    await expectTrpcError(callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: id, programId: program.id }), 'CONFLICT', 'CRM_BOOKING_PROPERTY_OBJECT_SOLD');
  });

  it('a deletion that overtook the upsert leaves a tombstone: the late upsert does not bring the object back; a later re-create does', async () => {
    const id = randomUUID();
    const t0 = Date.now() - 60_000;
    const gone = await writeChessboard(TOPICS.propertyObjectDeleted, { propertyObjectId: id, tenantId: TENANT, projectId, deletedAt: new Date(t0 + 1000).toISOString() });
    await publish();
    expect(await processed(gone)).toEqual({ result: 'applied', detail: null });
    const late = await writeChessboard(TOPICS.propertyObjectUpserted, upserted(id, 1, 'Free', new Date(t0)));
    await publish();
    expect(await processed(late)).toMatchObject({ result: 'no-op' });
    expect(await viewOf(id)).toMatchObject({ deleted: true });

    const again = await writeChessboard(TOPICS.propertyObjectUpserted, upserted(id, 1, 'Free', new Date(t0 + 2000)));
    await publish();
    expect(await processed(again)).toEqual({ result: 'applied', detail: null });
    expect(await viewOf(id)).toMatchObject({ deleted: false, status: 'Free', source_version: 1 });
  });

  it('a duplicate delivery is dropped by crm.inbox; a contract violation goes to the group\'s DLQ and is recorded rejected', async () => {
    const id = await newObject();
    await publish();
    const [row] = await t.database.sql<{ message_id: string }[]>`
      SELECT message_id::text FROM chessboard.outbox WHERE aggregate_id = ${id} AND topic = ${TOPICS.propertyObjectUpserted}`;
    await processed(row!.message_id);
    const viewBefore = await viewOf(id);
    // the relay publishes the same row again (a crash after the ack, before marking it published)
    await t.database.sql`UPDATE chessboard.outbox SET published_at = NULL WHERE message_id = ${row!.message_id}`;
    await publish();
    await eventually(async () => t.logLines().some((l) => l.msg === 'consumer no-op' && l.result === 'duplicate' && l.messageId === row!.message_id
      && l.consumer === crmPropertyObjectProjectionConsumer.name), 60_000, 'the redelivery consumed as a duplicate');
    const [{ n }] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.inbox WHERE message_id = ${row!.message_id}`;
    expect(n).toBe(1);
    expect(await viewOf(id)).toEqual(viewBefore);

    const bad = randomUUID();
    await pipe.producer.send({
      topic: withPrefix(t.prefix, TOPICS.propertyObjectUpserted),
      messages: [{ key: id, value: JSON.stringify({ messageId: bad, type: 'PropertyObjectUpserted', contractVersion: 1, aggregateType: 'PropertyObject', aggregateId: id,
        occurredAt: new Date().toISOString(), tenantId: TENANT, correlationId: randomUUID(), causationId: null, payload: { propertyObjectId: id } }) }],
    });
    expect(await processed(bad)).toMatchObject({ result: 'rejected', detail: 'CONTRACT_VIOLATION' });
    const offsets = await (async () => {
      const admin = pipe.kafka.admin();
      await admin.connect();
      try {
        return await admin.fetchTopicOffsets(withPrefix(t.prefix, dlqTopic(crmPropertyObjectProjectionConsumer.name)));
      } finally {
        await admin.disconnect();
      }
    })();
    expect(offsets.reduce((sum, p) => sum + Number(p.high), 0)).toBe(1);
    expect(await viewOf(id)).toEqual(viewBefore);
  });
});
