import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../platform/kafka/client';
import { startConsumer } from '../platform/kafka/consumer-runner';
import { TOPICS } from '../platform/kafka/topics';
import { createOutboxRelayJob } from '../platform/outbox/outbox-relay.job';
import { writeOutbox } from '../platform/outbox/write';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { cardProjectionConsumer } from './card-projection.consumer';
import { applyPropertyObjectStatusChanged, applyPropertyObjectUpserted } from './card-projection';
import { eventually } from '../../test/harness/saga-harness';
import {
  countRows, DAY_MS, insertObjectCard, insertProjectCard, jobContext, objectCard, objectUpserted, project, projectCard,
  projectUpserted, statusChanged, TENANT,
} from '../../test/fixtures/catalog.fixtures';

let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

const P = TOPICS;

describe('card projection: upsert and status change', () => {
  it('a new object\'s upsert and status change in two concurrent transactions: the newer status is never lost', async () => {
    // the consumer applies partitions concurrently, and the two events travel on two topics
    const id = randomUUID();
    const projectId = randomUUID();
    let commitA!: () => void;
    const gate = new Promise<void>((r) => { commitA = r; });
    let parked!: () => void;
    const changeParked = new Promise<void>((r) => { parked = r; });
    const a = t.database.db.transaction(async (tx) => {
      // no card yet: the change is parked for the upsert (pending_status_changes), not yet committed
      await applyPropertyObjectStatusChanged(tx, statusChanged(id, projectId, { fromStatus: 'Free', toStatus: 'Sold', version: 2 }));
      parked();
      await gate;
    });
    await changeParked;
    const b = t.database.db.transaction((tx) => applyPropertyObjectUpserted(tx, objectUpserted(id, projectId, { status: 'Free', version: 1 })));
    // the upsert waits for the status change's transaction (the object's lock) instead of missing its row
    await eventually(async () => (await t.database.sql`SELECT 1 FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).length > 0, 'the upsert waiting on the object', 10_000);
    commitA();
    await a;
    await b;
    expect(await objectCard(t.database, id)).toMatchObject({ status: 'Published', sale_status: 'Sold', source_version: 2 });
    expect(await countRows(t.database, 'catalog.pending_status_changes', `property_object_id = '${id}'`)).toBe(0);
  });

  it('an upsert creates a Published card from the object (sale status, source version, developer = tenant)', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    const outcome = await project(t, P.propertyObjectUpserted, id, objectUpserted(id, projectId, { status: 'Reserved', version: 4, price: 7_000_000 }));
    expect(outcome.result).toBe('applied');
    const card = await objectCard(t.database, id);
    expect(card).toMatchObject({ status: 'Published', sale_status: 'Reserved', project_id: projectId, source_version: 4, developer_id: TENANT, price: '7000000.00' });
  });

  it('a Hidden object is a Hidden card; status changes keep the sale status in step and unhide it', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    await project(t, P.propertyObjectUpserted, id, objectUpserted(id, projectId, { status: 'Hidden', version: 1 }));
    expect(await objectCard(t.database, id)).toMatchObject({ status: 'Hidden', sale_status: 'Hidden' });

    await project(t, P.propertyObjectStatusChanged, id, statusChanged(id, projectId, { fromStatus: 'Hidden', toStatus: 'Free', soldAt: null, version: 2 }));
    expect(await objectCard(t.database, id)).toMatchObject({ status: 'Published', sale_status: 'Free', source_version: 2 });

    await project(t, P.propertyObjectStatusChanged, id, statusChanged(id, projectId, { fromStatus: 'Free', toStatus: 'Sold', version: 3, statusChangedAt: '2025-01-03T10:00:00.000Z' }));
    expect(await objectCard(t.database, id)).toMatchObject({ status: 'Published', sale_status: 'Sold', source_version: 3 });
  });

  it('ignores stale events by source version (an older upsert or status change after a newer one)', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    await project(t, P.propertyObjectUpserted, id, objectUpserted(id, projectId, { status: 'Booked', version: 5, price: 5_000_000, updatedAt: '2025-01-05T00:00:00.000Z' }));
    const before = await objectCard(t.database, id);

    const staleUpsert = await project(t, P.propertyObjectUpserted, id, objectUpserted(id, projectId, { status: 'Free', version: 4, price: 1 }));
    const staleStatus = await project(t, P.propertyObjectStatusChanged, id, statusChanged(id, projectId, { toStatus: 'Free', version: 3 }));
    expect(staleUpsert).toMatchObject({ result: 'no-op', detail: expect.stringMatching(/^stale/) });
    expect(staleStatus).toMatchObject({ result: 'no-op', detail: expect.stringMatching(/^stale/) });
    expect(await objectCard(t.database, id)).toEqual(before);
  });

  it('a status change for an unknown card is a no-op and creates nothing', async () => {
    const id = randomUUID();
    const outcome = await project(t, P.propertyObjectStatusChanged, id, statusChanged(id, randomUUID()));
    expect(outcome).toMatchObject({ result: 'no-op', detail: expect.stringMatching(/unknown card/) });
    expect(await objectCard(t.database, id)).toBeUndefined();
  });
});

describe('card projection: delisting', () => {
  it('a delete delists the card (Published → Delisted) and starts its retention clock', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    await insertObjectCard(t.database, { id, projectId, updatedAt: new Date(Date.now() - 5 * DAY_MS), sourceUpdatedAt: new Date('2025-01-01T00:00:00Z') });
    const outcome = await project(t, P.propertyObjectDeleted, id, { propertyObjectId: id, tenantId: TENANT, projectId, deletedAt: '2025-02-01T00:00:00.000Z' });
    expect(outcome.result).toBe('applied');
    const card = await objectCard(t.database, id);
    expect(card?.status).toBe('Delisted');
    expect(Date.now() - card!.updated_at.getTime()).toBeLessThan(60_000);
    expect(card?.source_updated_at).toEqual(new Date('2025-02-01T00:00:00Z'));
  });

  it('a delete for an unknown card is a no-op', async () => {
    const id = randomUUID();
    const outcome = await project(t, P.propertyObjectDeleted, id, { propertyObjectId: id, tenantId: TENANT, projectId: randomUUID(), deletedAt: '2025-02-01T00:00:00.000Z' });
    expect(outcome.result).toBe('no-op');
    expect(await objectCard(t.database, id)).toBeUndefined();
  });

  it('INV-5 CascadeHide: a deleted project delists all its object cards with the same updated_at as the project card', async () => {
    const projectId = randomUUID();
    const otherProject = randomUUID();
    const old = new Date(Date.now() - 10 * DAY_MS);
    await insertProjectCard(t.database, { id: projectId, updatedAt: old, sourceUpdatedAt: new Date('2025-01-01T00:00:00Z') });
    const published = await insertObjectCard(t.database, { projectId, updatedAt: old });
    const hidden = await insertObjectCard(t.database, { projectId, status: 'Hidden', saleStatus: 'Hidden', updatedAt: old });
    const delistedLongAgo = new Date(Date.now() - 20 * DAY_MS);
    const alreadyDelisted = await insertObjectCard(t.database, { projectId, status: 'Delisted', updatedAt: delistedLongAgo });
    const foreign = await insertObjectCard(t.database, { projectId: otherProject, updatedAt: old });

    const outcome = await project(t, P.projectDeleted, projectId, { projectId, tenantId: TENANT, deletedAt: '2025-02-01T00:00:00.000Z' });
    expect(outcome).toMatchObject({ result: 'applied', detail: expect.stringMatching(/INV-5 CascadeHide: 2 object card/) });

    const pc = await projectCard(t.database, projectId);
    expect(pc?.status).toBe('Delisted');
    for (const id of [published, hidden]) {
      const c = await objectCard(t.database, id);
      expect(c?.status).toBe('Delisted');
      expect(c?.updated_at).toEqual(pc?.updated_at);
    }
    // INV-7: an object card delisted earlier keeps its own retention clock
    expect(await objectCard(t.database, alreadyDelisted)).toMatchObject({ status: 'Delisted', updated_at: delistedLongAgo });
    expect(await objectCard(t.database, foreign)).toMatchObject({ status: 'Published', updated_at: old });
  });

  it('INV-7 DelistedFrozen: events for a Delisted card are no-ops and leave updated_at untouched', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    const delistedAt = new Date(Date.now() - 40 * DAY_MS);
    const deletedAt = new Date('2025-02-01T00:00:00Z');
    await insertProjectCard(t.database, { id: projectId, status: 'Delisted', updatedAt: delistedAt, sourceVersion: 3, sourceUpdatedAt: deletedAt });
    await insertObjectCard(t.database, { id, projectId, status: 'Delisted', updatedAt: delistedAt, sourceVersion: 3, sourceUpdatedAt: deletedAt });
    const objectBefore = await objectCard(t.database, id);
    const projectBefore = await projectCard(t.database, projectId);

    const outcomes = [
      await project(t, P.propertyObjectStatusChanged, id, statusChanged(id, projectId, { version: 9, statusChangedAt: '2025-03-01T00:00:00.000Z' })),
      await project(t, P.propertyObjectDeleted, id, { propertyObjectId: id, tenantId: TENANT, projectId, deletedAt: '2025-03-01T00:00:00.000Z' }),
      // a delayed upsert produced before the deletion (newer version, older time) must not resurrect it
      await project(t, P.propertyObjectUpserted, id, objectUpserted(id, projectId, { version: 4, updatedAt: '2025-01-31T00:00:00.000Z' })),
      await project(t, P.projectDeleted, projectId, { projectId, tenantId: TENANT, deletedAt: '2025-03-01T00:00:00.000Z' }),
      await project(t, P.projectUpserted, projectId, projectUpserted(projectId, { version: 3, updatedAt: '2025-01-15T00:00:00.000Z' })),
    ];
    for (const o of outcomes) expect(o).toMatchObject({ result: 'no-op', detail: expect.stringMatching(/INV-7 DelistedFrozen/) });
    expect(await objectCard(t.database, id)).toEqual(objectBefore);
    expect(await projectCard(t.database, projectId)).toEqual(projectBefore);
  });

  it('a restoring upsert brings a Delisted card back to Published with the same id; the overtaken delete is then stale', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    const created = new Date(Date.now() - 50 * DAY_MS);
    const delistedAt = new Date(Date.now() - 10 * DAY_MS);
    const deletedAt = new Date('2025-02-01T00:00:00Z');
    await insertProjectCard(t.database, { id: projectId, status: 'Delisted', updatedAt: delistedAt, createdAt: created, sourceVersion: 2, sourceUpdatedAt: deletedAt });
    await insertObjectCard(t.database, { id, projectId, status: 'Delisted', updatedAt: delistedAt, createdAt: created, sourceVersion: 2, sourceUpdatedAt: deletedAt });

    const restoredObject = await project(t, P.propertyObjectUpserted, id, objectUpserted(id, projectId, { version: 3, updatedAt: '2025-02-10T00:00:00.000Z', status: 'Free' }));
    const restoredProject = await project(t, P.projectUpserted, projectId, projectUpserted(projectId, { version: 3, updatedAt: '2025-02-10T00:00:00.000Z', name: 'Riverside II' }));
    expect(restoredObject).toMatchObject({ result: 'applied', detail: 'restored: Delisted → Published' });
    expect(restoredProject).toMatchObject({ result: 'applied', detail: 'restored: Delisted → Published' });

    const card = await objectCard(t.database, id);
    expect(card).toMatchObject({ status: 'Published', sale_status: 'Free', created_at: created, source_version: 3 });
    expect(card!.updated_at.getTime()).toBeGreaterThan(delistedAt.getTime());
    expect(await projectCard(t.database, projectId)).toMatchObject({ status: 'Published', name: 'Riverside II', created_at: created });

    // a second delete from before the restoration (e.g. a redelivery with a new message id) is stale
    const stale = await project(t, P.propertyObjectDeleted, id, { propertyObjectId: id, tenantId: TENANT, projectId, deletedAt: '2025-02-05T00:00:00.000Z' });
    expect(stale).toMatchObject({ result: 'no-op', detail: expect.stringMatching(/^stale/) });
    expect((await objectCard(t.database, id))?.status).toBe('Published');
  });

  it('a project upsert creates and updates the project card (free count, name)', async () => {
    const projectId = randomUUID();
    await project(t, P.projectUpserted, projectId, projectUpserted(projectId, { version: 1, propertyObjectsFreeCount: 7 }));
    await project(t, P.projectUpserted, projectId, projectUpserted(projectId, { version: 2, propertyObjectsFreeCount: 6, updatedAt: '2025-01-02T00:00:00.000Z' }));
    expect(await projectCard(t.database, projectId)).toMatchObject({ status: 'Published', free_count: 6, source_version: 2, developer_id: TENANT });
  });
});

describe('card projection through real Kafka', () => {
  it('chessboard outbox → relay → Kafka → startConsumer projects upsert, status change and project delete (inbox rows applied)', async () => {
    const kafka = createKafka(t.env, t.logger);
    const relay = createOutboxRelayJob(['chessboard']);
    const id = randomUUID();
    const projectId = randomUUID();
    const publish = async (write: Parameters<typeof t.database.db.transaction>[0]) => {
      await t.database.db.transaction(write);
      const s = await relay.run(jobContext(t, { kafka }));
      expect(s.Failed).toBe(0);
    };
    const waitFor = async (check: () => Promise<boolean>) => {
      const deadline = Date.now() + 45_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error('timed out waiting for the projection');
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const correlationId = randomUUID();
    const consumer = await startConsumer(cardProjectionConsumer, { database: t.database, env: t.env, logger: t.logger, kafka });
    try {
      await publish(async (tx) => {
        await writeOutbox(tx, 'chessboard', { topic: P.projectUpserted, aggregateType: 'Project', aggregateId: projectId, tenantId: TENANT, payload: projectUpserted(projectId), correlationId });
        await writeOutbox(tx, 'chessboard', { topic: P.propertyObjectUpserted, aggregateType: 'PropertyObject', aggregateId: id, tenantId: TENANT, payload: objectUpserted(id, projectId), correlationId });
      });
      await waitFor(async () => (await objectCard(t.database, id))?.status === 'Published' && (await projectCard(t.database, projectId))?.status === 'Published');

      await publish((tx) => writeOutbox(tx, 'chessboard', { topic: P.propertyObjectStatusChanged, aggregateType: 'PropertyObject', aggregateId: id, tenantId: TENANT, payload: statusChanged(id, projectId, { toStatus: 'Sold', version: 2 }), correlationId }).then(() => {}));
      await waitFor(async () => (await objectCard(t.database, id))?.sale_status === 'Sold');

      await publish((tx) => writeOutbox(tx, 'chessboard', { topic: P.projectDeleted, aggregateType: 'Project', aggregateId: projectId, tenantId: TENANT, payload: { projectId, tenantId: TENANT, deletedAt: new Date().toISOString() }, correlationId }).then(() => {}));
      await waitFor(async () => (await objectCard(t.database, id))?.status === 'Delisted');

      expect(await countRows(t.database, 'catalog.inbox', `consumer = 'catalog.card-projection' AND result = 'applied'`)).toBe(4);
    } finally {
      await consumer.stop();
      await relay.close?.();
    }
  }, 90_000);
});
