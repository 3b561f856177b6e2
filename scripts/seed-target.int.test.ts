import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconciliation } from '../server/ops/reconciliation';
import { createTestContext, type TestContext } from '../test/harness/harness';
import { seed } from './seed';
import { seedTarget, targetId } from './seed-target';

let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

// the same code path as `--scale target`, at 1/50 of its size
const SMALL = { objects: 20_000, activeBookings: 500, endedBookings: 500 };

describe('target-load seed (small scale)', () => {
  it('adds the target data set-based, consistent between crm and chessboard, once', async () => {
    const now = new Date();
    await seed(t.url, () => {});
    // the demo seed's own findings (its deliberately lost releases): the target data must add none
    const demoFindings = (await runReconciliation(t.database.db, { now, scope: null, consumerLag: 0 })).rows.map((r) => `${r.kind}:${r.propertyObjectId}`).sort();
    expect(demoFindings.length).toBeGreaterThan(0);

    const lines: string[] = [];
    const first = await seedTarget(t.url, { ...SMALL, now }, (l) => lines.push(l));
    expect(first).toMatchObject({ inserted: true, objects: 20_000, buildings: 20, projects: 2, activeBookings: 500, endedBookings: 500, delistedCards: 200 });
    const s = t.database.sql;
    const targetProjects = [targetId('project:0'), targetId('project:1')];

    const [c] = await s`SELECT
      (SELECT count(*)::int FROM chessboard.property_objects WHERE project_id IN ${s(targetProjects)}) AS objects,
      (SELECT count(*)::int FROM chessboard.buildings WHERE project_id IN ${s(targetProjects)} AND floors = 25 AND sections = 4) AS buildings,
      (SELECT max(n)::int FROM (SELECT count(*) AS n FROM chessboard.property_objects WHERE project_id IN ${s(targetProjects)} GROUP BY building_id, floor, section) x) AS per_floor,
      (SELECT count(*)::int FROM crm.property_objects WHERE project_id IN ${s(targetProjects)}) AS crm_objects,
      (SELECT count(*)::int FROM catalog.property_object_cards WHERE project_id IN ${s(targetProjects)}) AS cards,
      (SELECT count(*)::int FROM catalog.property_object_cards WHERE status = 'Delisted' AND updated_at < now() - interval '30 days') AS delisted_old,
      (SELECT count(*)::int FROM ops.job_runs) AS job_runs,
      (SELECT count(DISTINCT job)::int FROM ops.job_runs) AS jobs`;
    expect(c).toEqual({ objects: 20_000, buildings: 20, per_floor: 10, crm_objects: 20_000, cards: 20_000, delisted_old: expect.any(Number), job_runs: first.jobRuns, jobs: 5 });
    expect(c.delisted_old).toBeGreaterThanOrEqual(200);
    expect(first.jobRuns).toBeGreaterThan(30_000);

    const byStatus = Object.fromEntries((await s`SELECT b.status, count(*)::int AS n FROM crm.bookings b
      WHERE b.property_object_id IN (
        SELECT id FROM chessboard.property_objects WHERE project_id IN ${s(targetProjects)}) GROUP BY b.status`).map((r) => [r.status, r.n]));
    expect(byStatus).toEqual({ Reserved: 200, AwaitingPayment: 100, Booked: 200, Completed: 125, ReserveExpired: 125, BookingExpired: 125, Cancelled: 125 });

    // crm's projection has each object's status and version; every active booking's object is held by it
    const [{ drift }] = await s`SELECT count(*)::int AS drift FROM chessboard.property_objects po JOIN crm.property_objects c ON c.id = po.id
      WHERE po.project_id IN ${s(targetProjects)} AND (c.status <> po.status OR c.source_version <> po.version OR c.deleted
             OR c.floor IS DISTINCT FROM po.floor OR c.rooms IS DISTINCT FROM po.rooms)`;
    expect(drift).toBe(0);
    const [{ held }] = await s`SELECT count(*)::int AS held FROM crm.bookings b JOIN chessboard.property_objects po ON po.id = b.property_object_id
      WHERE po.project_id IN ${s(targetProjects)} AND b.status IN ('Reserved', 'AwaitingPayment', 'Booked') AND po.hold_deal_id = b.deal_id AND po.hold_booking_id = b.id
        AND coalesce(po.reserved_until, po.booked_until) = CASE WHEN b.status = 'Booked' THEN b.booking_expires_at ELSE b.reserve_expires_at END
        AND coalesce(po.reserved_until, po.booked_until) > now() + interval '1 hour'`;
    expect(held).toBe(500);

    // the reconciliation compares the target rows (all older than its settle window) and finds nothing new
    const [{ unsettled }] = await s`SELECT count(*)::int AS unsettled FROM crm.bookings WHERE updated_at > now() - interval '10 minutes'
      AND property_object_id IN (SELECT id FROM chessboard.property_objects WHERE project_id IN ${s(targetProjects)})`;
    expect(unsettled).toBe(0);
    const after = (await runReconciliation(t.database.db, { now, scope: null, consumerLag: 0 })).rows.map((r) => `${r.kind}:${r.propertyObjectId}`).sort();
    expect(after).toEqual(demoFindings);

    // the reconciliation's held-objects read is an Index Only Scan of the held ~1 % (migration 0011), not a table scan
    const plan = (await s.unsafe(`EXPLAIN SELECT id, tenant_id, number, project_id, building_id, status, coalesce(reserved_until, booked_until),
      hold_deal_id, hold_booking_id FROM chessboard.property_objects WHERE status IN ('Reserved', 'Booked') AND updated_at < now() - interval '2 minutes'`))
      .map((r) => String(r['QUERY PLAN'])).join('\n');
    expect(plan).toMatch(/Index Only Scan using ix_property_objects_held/);
    // the unfiltered bookings list (roles seeing every tenant) reads its page from ix_bookings_created_at (migration 0011)
    const listPlan = (await s.unsafe(`EXPLAIN SELECT b.*, d.title FROM crm.bookings b LEFT JOIN crm.deals d ON d.id = b.deal_id
      ORDER BY b.created_at DESC NULLS LAST, b.id DESC LIMIT 25`)).map((r) => String(r['QUERY PLAN'])).join('\n');
    expect(listPlan).toMatch(/Index Scan using ix_bookings_created_at/);

    // a second run adds nothing and says so
    const counts = async () => (await s`SELECT (SELECT count(*)::int FROM chessboard.property_objects) AS o, (SELECT count(*)::int FROM crm.bookings) AS b,
      (SELECT count(*)::int FROM crm.booking_timeline) AS tl, (SELECT count(*)::int FROM catalog.property_object_cards) AS c, (SELECT count(*)::int FROM ops.job_runs) AS j`)[0];
    const before = await counts();
    const again: string[] = [];
    const second = await seedTarget(t.url, { ...SMALL, now }, (l) => again.push(l));
    expect(second.inserted).toBe(false);
    expect(again.join('\n')).toMatch(/already present; nothing to do/);
    expect(await counts()).toEqual(before);

    // the check above is not vacuous: one lost timer change on a target object is found
    const [victim] = await s`UPDATE chessboard.property_objects SET booked_until = booked_until + interval '1 hour', updated_at = now() - interval '1 day'
      WHERE id = (SELECT id FROM chessboard.property_objects WHERE project_id IN ${s(targetProjects)} AND status = 'Booked' ORDER BY id LIMIT 1) RETURNING id`;
    const broken = await runReconciliation(t.database.db, { now, scope: null, consumerLag: 0 });
    expect(broken.rows.filter((r) => r.propertyObjectId === victim.id).map((r) => r.kind)).toEqual(['timer_mismatch']);
  }, 240_000);

  it('refuses counts it cannot lay out, writing nothing', async () => {
    await expect(seedTarget(t.url, { objects: 999, activeBookings: 1, endedBookings: 0 }, () => {})).rejects.toThrow(/objects/);
    await expect(seedTarget(t.url, { objects: 1000, activeBookings: 400, endedBookings: 200 }, () => {})).rejects.toThrow(/bookings need/);
    await expect(seedTarget(t.url, { objects: 1000.5, activeBookings: 1, endedBookings: 0 }, () => {})).rejects.toThrow(/whole number/);
  });
});
