import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { insertTenant, insertTenantWorld, insertUser, type TenantWorld } from '../../test/fixtures/auth.fixtures';
import type { Actor } from '../auth/actor';
import { buildings, propertyObjects, propertyObjectStatusHistory } from './schema';
import { buildingFingerprint, getGrid, getObject, listBuildings, listProjects } from './queries';

let t: TestContext;
let a: TenantWorld;
let b: TenantWorld;
let managerA: Actor;
let viewerB: Actor;
let ops: Actor;

beforeAll(async () => {
  t = await createTestContext();
  const db = t.database.db;
  a = await insertTenantWorld(db, await insertTenant(db, 'A'));
  b = await insertTenantWorld(db, await insertTenant(db, 'B'));
  managerA = (await insertUser(db, 'developer_manager', a.tenantId)).actor;
  viewerB = (await insertUser(db, 'viewer', b.tenantId)).actor;
  ops = (await insertUser(db, 'ops', null)).actor;
});
afterAll(async () => {
  await t?.close();
});

describe('chessboard read side (tenant scope)', () => {
  it('lists only the projects of the actor tenant; cross-tenant roles see all', async () => {
    const mine = await listProjects(t.database.db, managerA);
    expect(mine.map((p) => p.id)).toEqual([a.projectId]);
    const all = await listProjects(t.database.db, ops);
    expect(all.map((p) => p.id).sort()).toEqual([a.projectId, b.projectId].sort());
  });

  it('a foreign project, building or object is NOT_FOUND, exactly like a missing one', async () => {
    for (const call of [
      () => listBuildings(t.database.db, viewerB, a.projectId),
      () => getGrid(t.database.db, viewerB, a.buildingId),
      () => getObject(t.database.db, viewerB, a.objectIds.reserved),
      () => getGrid(t.database.db, viewerB, randomUUID()),
    ]) {
      await expect(call()).rejects.toMatchObject({ kind: 'NOT_FOUND' });
    }
  });

  it('grid returns every cell of the building in one query, top floor first, with counts per status', async () => {
    const grid = await getGrid(t.database.db, managerA, a.buildingId);
    expect(grid.building).toMatchObject({ id: a.buildingId, sections: 2, floors: 2 });
    expect(grid.cells.map((c) => [c.floor, c.section, c.number])).toEqual([[2, 1, '201'], [2, 2, '202'], [1, 1, '101'], [1, 2, '102']]);
    expect(grid.counts).toEqual({ Free: 1, Reserved: 1, Booked: 1, Sold: 1, Hidden: 0 });
    const reserved = grid.cells.find((c) => c.id === a.objectIds.reserved)!;
    expect(reserved.reservedUntil).toBeInstanceOf(Date);
    expect(reserved.holdDealId).toMatch(/^[0-9a-f-]{36}$/);
    expect(reserved).toMatchObject({ rooms: 2, area: 54.3, price: 9_870_000, status: 'Reserved', version: 1 });
    expect(grid.serverNow).toBeInstanceOf(Date);
  });

  it('serves a 1,000-unit building in one round trip of cells', async () => {
    const db = t.database.db;
    const buildingId = randomUUID();
    await db.insert(buildings).values({ id: buildingId, tenantId: a.tenantId, projectId: a.projectId, name: 'Tower', sections: 4, floors: 25 });
    const rows = [];
    for (let s = 1; s <= 4; s++) for (let f = 1; f <= 25; f++) for (let i = 1; i <= 10; i++) {
      rows.push({ id: randomUUID(), tenantId: a.tenantId, projectId: a.projectId, buildingId, section: s, floor: f, number: `${s}${f}${i}`, rooms: 1, area: 40, price: 1_000_000, status: 'Free' as const, statusSource: 'Import' as const });
    }
    await db.insert(propertyObjects).values(rows);
    const grid = await getGrid(db, managerA, buildingId);
    expect(grid.total).toBe(1000);
    expect(grid.counts.Free).toBe(1000);
  });

  it('object returns details and the status history, newest first', async () => {
    const db = t.database.db;
    const bookingId = randomUUID();
    await db.insert(propertyObjectStatusHistory).values([
      { propertyObjectId: a.objectIds.booked, tenantId: a.tenantId, fromStatus: 'Free', toStatus: 'Reserved', statusSource: 'Crm', at: new Date('2030-01-01T10:00:00Z'), bookingId, version: 2 },
      { propertyObjectId: a.objectIds.booked, tenantId: a.tenantId, fromStatus: 'Reserved', toStatus: 'Booked', statusSource: 'Crm', at: new Date('2030-01-01T11:00:00Z'), bookingId, version: 3 },
    ]);
    const { object, history } = await getObject(db, managerA, a.objectIds.booked);
    expect(object).toMatchObject({ id: a.objectIds.booked, status: 'Booked', buildingName: 'Building 1', number: '201' });
    expect(history.map((h) => `${h.fromStatus}->${h.toStatus}`)).toEqual(['Reserved->Booked', 'Free->Reserved']);
    expect(history[0].bookingId).toBe(bookingId);
  });

  it('the live-feed fingerprint changes when an object of the building changes, and only then', async () => {
    const db = t.database.db;
    const before = await buildingFingerprint(db, managerA, a.buildingId);
    expect(await buildingFingerprint(db, managerA, a.buildingId)).toBe(before);
    await db.update(propertyObjects)
      .set({ status: 'Reserved', reservedUntil: new Date(Date.now() + 60_000), holdDealId: randomUUID(), version: sql`${propertyObjects.version} + 1` })
      .where(eq(propertyObjects.id, a.objectIds.free));
    expect(await buildingFingerprint(db, managerA, a.buildingId)).not.toBe(before);
    // a foreign actor sees an empty building, never the other tenant's numbers
    expect(await buildingFingerprint(db, viewerB, a.buildingId)).toBe('0:0');
  });
});
