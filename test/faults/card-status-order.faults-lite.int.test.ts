import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardProjectionConsumer } from '../../server/catalog/card-projection.consumer';
import { objectUpserted, statusChanged } from '../fixtures/catalog.fixtures';
import { chessboardEnvelope } from '../fixtures/catalog.fixtures';
import type { ChessboardTopic } from '../../server/contracts/chessboard';
import { TOPICS } from '../../server/platform/kafka/topics';
import { createLogger } from '../../server/platform/logger';
import { createTestContext, type TestContext } from '../harness/harness';

/**
 * Regression of the bug the replay scenario found: a catalog card showed Free for a Booked object.
 * property-object-upserted (the creation, version 1, Free) and property-object-status-changed
 * (version 2 Reserved, 3 Booked) travel on different topics; with a backlog the card projection read
 * the status changes first — "unknown card: nothing to change" — then the upsert created the card
 * with the status of the object's creation, for good. Replaying the topics without the inbox repaired
 * those cards, which is how it showed. Fix: a status change for a card that does not exist yet is kept
 * (catalog.pending_status_changes) and applied by the upsert that creates the card when it is newer.
 */

let t: TestContext;
const logger = createLogger('faults-regression', { level: 'silent' });
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

async function consume<T extends ChessboardTopic>(topic: T, aggregateId: string, payload: Parameters<typeof chessboardEnvelope<T>>[2]) {
  return t.database.db.transaction((tx) =>
    cardProjectionConsumer.handle(tx, { topic, envelope: chessboardEnvelope(topic, aggregateId, payload), partition: 0, offset: '0' }, { logger, env: t.env }));
}

const cardOf = async (id: string) =>
  (await t.database.sql<{ sale_status: string; status: string; source_version: number }[]>`
    SELECT sale_status, status, source_version FROM catalog.property_object_cards WHERE id = ${id}`)[0];

describe('catalog card projection: status changes that overtake the creating upsert', () => {
  it('status changes (v2 Reserved, v3 Booked) consumed before the upsert (v1 Free): the card is created Booked at v3', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    const at = (s: number) => new Date(Date.parse('2026-05-01T10:00:00Z') + s * 1000).toISOString();
    expect(await consume(TOPICS.propertyObjectStatusChanged, id, statusChanged(id, projectId, { fromStatus: 'Reserved', toStatus: 'Booked', version: 3, statusChangedAt: at(3) }))).toMatchObject({ result: 'no-op' });
    expect(await consume(TOPICS.propertyObjectStatusChanged, id, statusChanged(id, projectId, { fromStatus: 'Free', toStatus: 'Reserved', version: 2, statusChangedAt: at(2) }))).toMatchObject({ result: 'no-op' });
    expect(await cardOf(id)).toBeUndefined();
    expect(await consume(TOPICS.propertyObjectUpserted, id, objectUpserted(id, projectId, { status: 'Free', version: 1, updatedAt: at(1) }))).toMatchObject({ result: 'applied' });
    expect(await cardOf(id)).toEqual({ sale_status: 'Booked', status: 'Published', source_version: 3 });
    const [{ n }] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM catalog.pending_status_changes WHERE property_object_id = ${id}`;
    expect(n).toBe(0);
  });

  it('a kept status change older than the upsert is dropped (the upsert is the newer state)', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    await consume(TOPICS.propertyObjectStatusChanged, id, statusChanged(id, projectId, { fromStatus: 'Free', toStatus: 'Reserved', version: 2, statusChangedAt: '2026-05-01T10:00:02Z' }));
    await consume(TOPICS.propertyObjectUpserted, id, objectUpserted(id, projectId, { status: 'Free', version: 4, updatedAt: '2026-05-01T10:00:04Z' }));
    expect(await cardOf(id)).toEqual({ sale_status: 'Free', status: 'Published', source_version: 4 });
  });

  it('in order (upsert first) nothing changes: the status change updates the card', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    await consume(TOPICS.propertyObjectUpserted, id, objectUpserted(id, projectId, { status: 'Free', version: 1, updatedAt: '2026-05-01T10:00:01Z' }));
    await consume(TOPICS.propertyObjectStatusChanged, id, statusChanged(id, projectId, { fromStatus: 'Free', toStatus: 'Reserved', version: 2, statusChangedAt: '2026-05-01T10:00:02Z' }));
    expect(await cardOf(id)).toEqual({ sale_status: 'Reserved', status: 'Published', source_version: 2 });
  });
});
