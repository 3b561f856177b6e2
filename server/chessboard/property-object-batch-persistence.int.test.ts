import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors';
import { writeOutboxMany } from '../platform/outbox/write';
import { TOPICS } from '../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { insertObjects, insertProject, readObject, type Place } from '../../test/fixtures/chessboard.fixtures';
import { release, type PropertyObjectState } from './property-object';
import { persistStatusTransitions, requestProjectAggregatesRecalc, type StatusTransitionWrite } from './property-object-persistence';

/**
 * The set-based writes of the hold-expiration job's batch (a handful of statements per batch instead
 * of ~8 per object — the bench's hold-expiration case): the same rows as one-at-a-time persistence,
 * in order, all or nothing.
 */

const AS_OF = new Date('2030-06-01T12:00:00.000Z');
const RUN = randomUUID();

let t: TestContext;
let place: Place;
beforeEach(async () => {
  t = await createTestContext();
  place = await insertProject(t.database);
});
afterEach(async () => { await t?.close(); });

async function releasesOf(ids: string[]): Promise<StatusTransitionWrite[]> {
  return Promise.all(ids.map(async (id) => {
    const o = await readObject(t.database, id);
    const from: PropertyObjectState = {
      status: o.status as PropertyObjectState['status'], reservedUntil: o.reserved_until, bookedUntil: o.booked_until, holdDealId: o.hold_deal_id,
      holdBookingId: o.hold_booking_id, soldAt: o.sold_at, statusSource: o.status_source as PropertyObjectState['statusSource'],
      statusChangedAt: o.status_changed_at, updatedAt: o.updated_at, version: o.version,
    };
    return { object: { id, ...place }, from, to: release(from, 'ExpirationJob', AS_OF), correlationId: RUN, dealId: o.hold_deal_id, reason: 'test', requestRecalc: false };
  }));
}

describe('persistStatusTransitions (batch)', () => {
  it('writes every object, one status-changed event and one history row each, in the order of the writes', async () => {
    const ids = await insertObjects(t.database, place, Array.from({ length: 30 }, (_, i) => ({ status: i % 2 ? 'Booked' as const : 'Reserved' as const, version: 2 })));
    const writes = await releasesOf(ids);
    const { messageIds } = await t.database.db.transaction((tx) => persistStatusTransitions(tx, writes));

    expect(messageIds).toHaveLength(30);
    for (const id of ids) {
      expect(await readObject(t.database, id)).toMatchObject({
        status: 'Free', reserved_until: null, booked_until: null, hold_deal_id: null, status_source: 'ExpirationJob', version: 3, updated_at: AS_OF,
      });
    }
    const events = await t.database.sql<{ message_id: string; aggregate_id: string; payload: { payload: Record<string, unknown>; correlationId: string } }[]>`
      SELECT message_id, aggregate_id, payload FROM chessboard.outbox ORDER BY id`;
    expect(events.map((e) => e.aggregate_id)).toEqual(ids);
    expect(events.map((e) => e.message_id)).toEqual(messageIds);
    expect(events[1].payload).toMatchObject({ correlationId: RUN, payload: { fromStatus: 'Booked', toStatus: 'Free', statusSource: 'ExpirationJob', version: 3 } });
    const history = await t.database.sql<{ property_object_id: string; message_id: string; from_status: string }[]>`
      SELECT property_object_id, message_id, from_status FROM chessboard.property_object_status_history ORDER BY id`;
    expect(history.map((h) => [h.property_object_id, h.message_id])).toEqual(ids.map((id, i) => [id, messageIds[i]]));
    expect(history[0].from_status).toBe('Reserved');
  });

  it('all or nothing: one object whose version moved → VERSION_CONFLICT, and the savepoint leaves no row of the batch', async () => {
    const ids = await insertObjects(t.database, place, Array.from({ length: 5 }, () => ({ status: 'Reserved' as const, version: 2 })));
    const writes = await releasesOf(ids);
    await t.database.sql`UPDATE chessboard.property_objects SET version = 7 WHERE id = ${ids[3]}`;
    const error = await t.database.db.transaction(async (tx) => {
      try {
        await tx.transaction((sp) => persistStatusTransitions(sp, writes));
        return null;
      } catch (e) {
        return e;
      }
    });
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('CHESSBOARD_PROPERTY_OBJECT_VERSION_CONFLICT');
    expect((error as AppError).message).toContain(ids[3]);
    expect(await t.database.sql`SELECT 1 FROM chessboard.property_objects WHERE status = 'Free'`).toHaveLength(0);
    expect(await t.database.sql`SELECT 1 FROM chessboard.outbox`).toHaveLength(0);
    expect(await t.database.sql`SELECT 1 FROM chessboard.property_object_status_history`).toHaveLength(0);
  });

  it('an event that breaks its contract fails the whole write before anything is inserted', async () => {
    const error = await t.database.db.transaction(async (tx) => {
      try {
        await writeOutboxMany(tx, 'chessboard', [{
          topic: TOPICS.propertyObjectStatusChanged, aggregateType: 'PropertyObject', aggregateId: randomUUID(), tenantId: place.tenantId,
          correlationId: RUN, payload: { propertyObjectId: 'not-a-uuid' } as never,
        }]);
        return null;
      } catch (e) {
        return e;
      }
    });
    expect(error).toBeTruthy();
    expect(await t.database.sql`SELECT 1 FROM chessboard.outbox`).toHaveLength(0);
  });
});

describe('requestProjectAggregatesRecalc (one statement per batch)', () => {
  it('marks every distinct project once and keeps the earliest pending request', async () => {
    const other = await insertProject(t.database);
    const earlier = new Date('2030-06-01T11:00:00.000Z');
    await t.database.sql`UPDATE chessboard.projects SET aggregates_recalc_requested_at = ${earlier.toISOString()} WHERE id = ${other.projectId}`;
    await t.database.db.transaction((tx) => requestProjectAggregatesRecalc(tx, [place.projectId, other.projectId, place.projectId], AS_OF));
    const rows = await t.database.sql<{ id: string; at: Date }[]>`SELECT id, aggregates_recalc_requested_at AS at FROM chessboard.projects`;
    const at = Object.fromEntries(rows.map((r) => [r.id, new Date(r.at).toISOString()]));
    expect(at).toEqual({ [place.projectId]: AS_OF.toISOString(), [other.projectId]: earlier.toISOString() });
  });
});
