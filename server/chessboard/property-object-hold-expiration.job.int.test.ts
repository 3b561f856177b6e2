import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../platform/db';
import { AppError } from '../platform/errors';
import { runJobCycle } from '../platform/jobs/run-log';
import { TOPICS } from '../platform/kafka/topics';
import { renderMetrics } from '../platform/metrics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import {
  bookingOf, consumed, crmEnvelope, insertObjects, insertProject, jobContext, readObject, statusChangedEvents, type Place,
} from '../../test/fixtures/chessboard.fixtures';
import { crmPropertyObjectStatusConsumer } from './crm-property-object-status.consumer';
import { bindHoldExpirationMetrics, unbindHoldExpirationMetrics } from './metrics';
import {
  createPropertyObjectHoldExpirationJob, expirationJobGuard, propertyObjectHoldExpirationJob, type HoldExpirationSummary,
} from './property-object-hold-expiration.job';
import { expiredHoldsCountQuery, selectExpiredHoldsForUpdate, writeHoldReleases } from './property-object-hold-expiration.sql';
import { release, stateOf } from './property-object';
import { statusTransitionRows } from './property-object-persistence';
import { outboxBatch } from '../platform/outbox/write';

const MIN = 60_000;
const AS_OF = new Date('2030-06-01T12:00:00.000Z');
const ago = (ms: number) => new Date(AS_OF.getTime() - ms);
const fixedNow = () => AS_OF;

let t: TestContext;
let place: Place;
beforeEach(async () => {
  t = await createTestContext();
  place = await insertProject(t.database);
});
afterEach(async () => { await t?.close(); });

const run = (job = createPropertyObjectHoldExpirationJob({ now: fixedNow }), opts: { signal?: AbortSignal; database?: Database; runId?: string } = {}) =>
  job.run(jobContext({ database: opts.database ?? t.database, env: t.env, logger: t.logger }, opts)) as Promise<HoldExpirationSummary>;

async function allObjects(database = t.database) {
  return database.sql<{ id: string; status: string; version: number; status_source: string }[]>`SELECT id, status, version, status_source FROM chessboard.property_objects ORDER BY id`;
}

describe('property-object-hold-expiration: what is released', () => {
  it('releases Reserved and Booked past grace with every field of the mapping; leaves in-grace, Free, Sold, Hidden untouched', async () => {
    const dealR = randomUUID();
    const dealB = randomUUID();
    const [rPast, bPast, rInGrace, rAtEdge, rFuture, bInGrace, free, sold, hidden] = await insertObjects(t.database, place, [
      { status: 'Reserved', timer: ago(11 * MIN), holdDealId: dealR, version: 2 },
      { status: 'Booked', timer: ago(120 * MIN), holdDealId: dealB, version: 3 },
      { status: 'Reserved', timer: ago(9 * MIN) },
      { status: 'Reserved', timer: ago(10 * MIN) }, // timer + grace = AsOf: still inside [timer, timer + grace]
      { status: 'Reserved', timer: new Date(AS_OF.getTime() + 5 * MIN) },
      { status: 'Booked', timer: ago(1 * MIN) },
      { status: 'Free' },
      { status: 'Sold' },
      { status: 'Hidden' },
    ]);
    const untouched = [rInGrace, rAtEdge, rFuture, bInGrace, free, sold, hidden];
    const before = new Map(await Promise.all(untouched.map(async (id) => [id, await readObject(t.database, id)] as const)));
    const runId = randomUUID();

    const summary = await run(undefined, { runId });
    expect(summary).toMatchObject({ ReservedReleasedCount: 1, BookedReleasedCount: 1, SkippedLockedCount: 0, Errors: 0, Backlog: 0, AsOf: AS_OF.toISOString() });
    expect(summary.DurationMs).toBeGreaterThanOrEqual(0);

    for (const [id, from, timer, deal, version] of [[rPast, 'Reserved', ago(11 * MIN), dealR, 2], [bPast, 'Booked', ago(120 * MIN), dealB, 3]] as const) {
      const o = await readObject(t.database, id);
      expect(o).toMatchObject({
        status: 'Free', reserved_until: null, booked_until: null, hold_deal_id: null, hold_booking_id: null, status_source: 'ExpirationJob',
        status_changed_at: AS_OF, updated_at: AS_OF, version: version + 1,
      });
      const events = await statusChangedEvents(t.database, id);
      expect(events).toHaveLength(1);
      expect(events[0].payload).toMatchObject({
        aggregateType: 'PropertyObject', aggregateId: id, correlationId: runId, causationId: null, occurredAt: AS_OF.toISOString(),
        payload: {
          propertyObjectId: id, tenantId: place.tenantId, projectId: place.projectId, buildingId: place.buildingId,
          fromStatus: from, toStatus: 'Free', statusSource: 'ExpirationJob', reservedUntil: null, bookedUntil: null, holdDealId: null,
          soldAt: null, statusChangedAt: AS_OF.toISOString(), version: version + 1,
        },
      });
      const [release] = await t.database.sql`SELECT * FROM chessboard.hold_releases WHERE property_object_id = ${id}`;
      expect(release).toMatchObject({
        tenant_id: place.tenantId, project_id: place.projectId, hold_deal_id: deal, from_status: from, status_source: 'ExpirationJob',
        run_id: runId, message_id: events[0].message_id,
      });
      expect(Number(release.overdue_by_ms)).toBe(AS_OF.getTime() - timer.getTime());
      expect(new Date(release.expired_timer_at)).toEqual(timer);
      expect(new Date(release.released_at)).toEqual(AS_OF);
      const history = await t.database.sql`SELECT * FROM chessboard.property_object_status_history WHERE property_object_id = ${id}`;
      expect(history).toHaveLength(1);
      expect(history[0]).toMatchObject({ from_status: from, to_status: 'Free', status_source: 'ExpirationJob', deal_id: deal, message_id: events[0].message_id, version: version + 1 });
    }
    for (const id of untouched) {
      expect(await readObject(t.database, id)).toEqual(before.get(id));
      expect(await statusChangedEvents(t.database, id)).toHaveLength(0);
    }
    // ProjectAggregatesRecalcRequested
    const [p] = await t.database.sql`SELECT aggregates_recalc_requested_at FROM chessboard.projects WHERE id = ${place.projectId}`;
    expect(new Date(p.aggregates_recalc_requested_at)).toEqual(AS_OF);
  });

  it('the outbox rows written are outboxBatch\'s rows whole (the envelopes go through the jsonb parameter and come out unchanged)', async () => {
    const other = await insertProject(t.database, randomUUID());
    const ids = [
      ...await insertObjects(t.database, place, [{ status: 'Reserved', timer: ago(30 * MIN), version: 2 }, { status: 'Reserved', timer: ago(29 * MIN), version: 5 }]),
      ...await insertObjects(t.database, other, [{ status: 'Reserved', timer: ago(28 * MIN) }]),
    ];
    const runId = randomUUID();
    const rolledBack = new Error('rolled back');
    for (const batch of [ids, [ids[0]]]) { // mixed tenants, projects and versions; and a batch of one (every key alike)
      // written and read in one transaction, rolled back: each batch starts from the same held objects
      await t.database.db.transaction(async (tx) => {
        const locked = (await selectExpiredHoldsForUpdate(tx, 'reserved', ago(10 * MIN), 10)).filter((o) => batch.includes(o.id));
        const transitions = locked.map((o) => ({
          object: o, from: stateOf(o), to: release(stateOf(o), 'ExpirationJob', AS_OF), correlationId: runId, causationId: null,
          dealId: o.holdDealId, bookingId: o.holdBookingId, reason: 'hold-expiration: ReservedUntil expired', requestRecalc: false, messageId: randomUUID(),
        }));
        await writeHoldReleases(tx, {
          transitions, timers: locked.map((o) => ({ expiredTimerAt: o.reservedUntil!, overdueByMs: AS_OF.getTime() - o.reservedUntil!.getTime() })),
          runId, releasedAt: AS_OF, releaseStatusSource: 'ExpirationJob', recalcProjects: [], recalcAt: AS_OF,
        });
        const expected = outboxBatch('chessboard', statusTransitionRows(transitions).events).rows;
        expect(expected).toHaveLength(batch.length);
        const written = await tx.execute(sql`SELECT message_id, topic, key, aggregate_type, aggregate_id, payload, headers FROM chessboard.outbox ORDER BY id`);
        expect([...written].map((r) => ({ ...r }))).toEqual(JSON.parse(JSON.stringify(expected)));
        throw rolledBack;
      }).catch((e) => { if (e !== rolledBack) throw e; });
    }
  });

  it('is idempotent by state: a second cycle changes nothing', async () => {
    await insertObjects(t.database, place, [{ status: 'Reserved', timer: ago(30 * MIN) }, { status: 'Booked', timer: ago(30 * MIN) }]);
    expect(await run()).toMatchObject({ ReservedReleasedCount: 1, BookedReleasedCount: 1 });
    const objects = await allObjects();
    const events = await statusChangedEvents(t.database);
    expect(await run()).toMatchObject({ ReservedReleasedCount: 0, BookedReleasedCount: 0, SkippedLockedCount: 0, Errors: 0 });
    expect(await allObjects()).toEqual(objects);
    expect(await statusChangedEvents(t.database)).toEqual(events);
  });

  it('is cross-tenant (System worker): holds of every tenant are released', async () => {
    const other = await insertProject(t.database, '0a000000-0000-4000-8000-00000000000b');
    await insertObjects(t.database, place, [{ status: 'Reserved', timer: ago(30 * MIN) }]);
    await insertObjects(t.database, other, [{ status: 'Booked', timer: ago(30 * MIN) }]);
    expect(await run()).toMatchObject({ ReservedReleasedCount: 1, BookedReleasedCount: 1 });
  });
});

describe('property-object-hold-expiration: batches and concurrency', () => {
  it('BatchSize 200 with 450 stuck holds per phase: 200 per phase per cycle, oldest first, backlog drained by later cycles', async () => {
    // distinct timers, inserted in shuffled order so that "oldest first" is not insertion order
    const spec = (status: 'Reserved' | 'Booked') => Array.from({ length: 450 }, (_, i) => ({ status, timer: ago(60 * MIN + i * 1000) }));
    const shuffle = <T>(xs: T[]) => xs.map((x) => [Math.random(), x] as const).sort((a, b) => a[0] - b[0]).map(([, x]) => x);
    await insertObjects(t.database, place, shuffle([...spec('Reserved'), ...spec('Booked')]));
    expect(t.env.HOLD_EXPIRATION_BATCH_SIZE).toBe(200);

    const released = async (): Promise<{ reserved: number[]; booked: number[] }> => {
      const rows = await t.database.sql<{ from_status: string; timer: string }[]>`SELECT from_status, expired_timer_at AS timer FROM chessboard.hold_releases`;
      const ms = (s: string) => rows.filter((r) => r.from_status === s).map((r) => AS_OF.getTime() - new Date(r.timer).getTime());
      return { reserved: ms('Reserved'), booked: ms('Booked') };
    };
    const first = await run();
    expect(first).toMatchObject({ ReservedReleasedCount: 200, BookedReleasedCount: 200, Backlog: 500 });
    const afterFirst = await released();
    // the 200 oldest of each phase: overdue by 60 min + 250 s … 60 min + 449 s
    for (const phase of ['reserved', 'booked'] as const) {
      expect(Math.min(...afterFirst[phase])).toBe(60 * MIN + 250_000);
      expect(Math.max(...afterFirst[phase])).toBe(60 * MIN + 449_000);
    }
    expect(await run()).toMatchObject({ ReservedReleasedCount: 200, BookedReleasedCount: 200, Backlog: 100 });
    expect(await run()).toMatchObject({ ReservedReleasedCount: 50, BookedReleasedCount: 50, Backlog: 0 });
    expect(await run()).toMatchObject({ ReservedReleasedCount: 0, BookedReleasedCount: 0, Backlog: 0 });
    expect((await allObjects()).every((o) => o.status === 'Free')).toBe(true);
  });

  it('four instances concurrently on 2,000 stuck holds: each object released exactly once, one event each', async () => {
    const projects = [place, await insertProject(t.database), await insertProject(t.database)];
    for (const [i, p] of projects.entries()) {
      const n = i === 0 ? 666 : 667;
      await insertObjects(t.database, p, Array.from({ length: n }, (_, k) => ({ status: k % 2 ? 'Booked' as const : 'Reserved' as const, timer: ago(20 * MIN + k * 10) })));
    }
    const instances = Array.from({ length: 4 }, (_, i) => createDatabase(t.url, { max: 3, applicationName: `hold-exp-instance-${i}` }));
    try {
      const loop = async (database: Database) => {
        const job = createPropertyObjectHoldExpirationJob({ now: fixedNow });
        let total = 0;
        for (;;) {
          const s = await run(job, { database });
          total += s.ReservedReleasedCount + s.BookedReleasedCount;
          if (s.ReservedReleasedCount + s.BookedReleasedCount === 0 && s.SkippedLockedCount === 0) return total;
        }
      };
      const totals = await Promise.all(instances.map(loop));
      expect(totals.reduce((a, b) => a + b, 0)).toBe(2000);
    } finally {
      await Promise.all(instances.map((d) => d.close()));
    }
    const [perObject] = await t.database.sql`
      SELECT count(*)::int AS objects, max(n)::int AS max_releases, min(n)::int AS min_releases
      FROM (SELECT property_object_id, count(*) AS n FROM chessboard.hold_releases GROUP BY property_object_id) x`;
    expect(perObject).toEqual({ objects: 2000, max_releases: 1, min_releases: 1 });
    const [events] = await t.database.sql`
      SELECT count(*)::int AS n, count(DISTINCT aggregate_id)::int AS objects FROM chessboard.outbox WHERE topic = ${TOPICS.propertyObjectStatusChanged}`;
    expect(events).toEqual({ n: 2000, objects: 2000 });
    const [left] = await t.database.sql`SELECT count(*)::int AS n FROM chessboard.property_objects WHERE status <> 'Free'`;
    expect(left.n).toBe(0);
  });
});

describe('property-object-hold-expiration: race with the crm consumer', () => {
  async function stuckHold() {
    const deal = randomUUID();
    const bookingId = randomUUID();
    const [id] = await insertObjects(t.database, place, [{ status: 'Reserved', timer: ago(30 * MIN), holdDealId: deal, holdBookingId: bookingId }]);
    return { id, booking: bookingOf(id, place.tenantId, { bookingId, dealId: deal }) };
  }
  const handle = (tx: Parameters<Parameters<Database['db']['transaction']>[0]>[0], envelope: ReturnType<typeof crmEnvelope>) =>
    crmPropertyObjectStatusConsumer.handle(tx, consumed(TOPICS.bookingExpired, envelope), { logger: t.logger, env: t.env });

  it('the consumer holds the row lock → the job skips the object (SkippedLockedCount ≥ 1), no double release', async () => {
    const { id, booking } = await stuckHold();
    // another project: the consumer's open transaction also holds its project's row (recalc request)
    const [other] = await insertObjects(t.database, await insertProject(t.database), [{ status: 'Reserved', timer: ago(40 * MIN) }]);
    let summary: HoldExpirationSummary | undefined;
    await t.database.db.transaction(async (tx) => {
      expect((await handle(tx, crmEnvelope(TOPICS.bookingExpired, booking.expired()))).result).toBe('applied');
      // the consumer's transaction is still open: the job runs now, on other connections
      summary = await run();
    });
    expect(summary).toMatchObject({ ReservedReleasedCount: 1, SkippedLockedCount: 1 });
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Free', status_source: 'Crm' });
    expect(await readObject(t.database, other)).toMatchObject({ status: 'Free', status_source: 'ExpirationJob' });
    const events = await statusChangedEvents(t.database, id);
    expect(events).toHaveLength(1);
    expect(events[0].payload.payload.statusSource).toBe('Crm');
    expect(await t.database.sql`SELECT 1 FROM chessboard.hold_releases WHERE property_object_id = ${id}`).toHaveLength(0);
  });

  it('the consumer commits first → the object is no longer selected, no event from the job', async () => {
    const { id, booking } = await stuckHold();
    await t.database.db.transaction((tx) => handle(tx, crmEnvelope(TOPICS.bookingExpired, booking.expired())));
    expect(await run()).toMatchObject({ ReservedReleasedCount: 0, SkippedLockedCount: 0 });
    const events = await statusChangedEvents(t.database, id);
    expect(events.map((e) => e.payload.payload.statusSource)).toEqual(['Crm']);
  });

  it('the job releases first → the late CRM release is a no-op in the consumer, no HOLD_MISMATCH', async () => {
    const { id, booking } = await stuckHold();
    expect(await run()).toMatchObject({ ReservedReleasedCount: 1 });
    const outcome = await t.database.db.transaction((tx) => handle(tx, crmEnvelope(TOPICS.bookingExpired, booking.expired())));
    expect(outcome.result).toBe('no-op');
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Free', status_source: 'ExpirationJob' });
    expect(await statusChangedEvents(t.database, id)).toHaveLength(1);
    expect(await t.database.sql`SELECT 1 FROM chessboard.hold_mismatches`).toHaveLength(0);
  });
});

describe('property-object-hold-expiration: failures and cancellation', () => {
  it('a poison object in a batch of 50 → 49 released and committed; the poison stays held, logged at ERROR, counted', async () => {
    const ids = await insertObjects(t.database, place, Array.from({ length: 50 }, (_, i) => ({ status: 'Reserved' as const, timer: ago(20 * MIN + i * 1000) })));
    const poison = ids[17];
    const errorsBefore = await metricValue('chessboard_property_object_hold_expiration_errors_total');
    const job = createPropertyObjectHoldExpirationJob({
      now: fixedNow,
      guard: (o) => {
        if (o.id === poison) throw new AppError('TEST_POISON', 'PRECONDITION_FAILED', 'unexpected state');
        return expirationJobGuard(o);
      },
    });
    const summary = await run(job);
    expect(summary).toMatchObject({ ReservedReleasedCount: 49, Errors: 1 });
    const objects = await allObjects();
    expect(objects.filter((o) => o.status === 'Free')).toHaveLength(49);
    expect(objects.find((o) => o.id === poison)).toMatchObject({ status: 'Reserved', version: 1 });
    expect(await statusChangedEvents(t.database, poison)).toHaveLength(0);
    expect(await statusChangedEvents(t.database)).toHaveLength(49);
    const line = t.logLines().find((l) => l.msg === 'item failed');
    expect(line).toMatchObject({ level: 'error', propertyObjectId: poison, err: { message: 'unexpected state', code: 'TEST_POISON' } });
    expect(await metricValue('chessboard_property_object_hold_expiration_errors_total')).toBe(errorsBefore + 1);
    // left for the next cycle
    expect(await run()).toMatchObject({ ReservedReleasedCount: 1, Errors: 0 });
  });

  it('a version conflict is retried with a re-read, not treated as poison: the object is released, no error counted', async () => {
    const ids = await insertObjects(t.database, place, Array.from({ length: 5 }, (_, i) => ({ status: 'Reserved' as const, timer: ago(20 * MIN + i * 1000) })));
    const raced = ids[2];
    let staled = false;
    const job = createPropertyObjectHoldExpirationJob({
      now: fixedNow,
      guard: (o) => {
        // what the job read is one version behind the row (a writer committed between the read and the write)
        if (o.id === raced && !staled) { staled = true; o.version -= 1; }
        return expirationJobGuard(o);
      },
    });
    expect(await run(job)).toMatchObject({ ReservedReleasedCount: 5, Errors: 0 });
    expect(await readObject(t.database, raced)).toMatchObject({ status: 'Free', status_source: 'ExpirationJob' });
    expect(t.logLines().find((l) => l.msg === 'item failed')).toBeUndefined();
    expect(t.logLines().find((l) => l.msg === 'version conflict; released after a re-read')).toMatchObject({ propertyObjectId: raced, tenantId: place.tenantId });
    expect(await statusChangedEvents(t.database, raced)).toHaveLength(1);
  });

  it('a poison object failing after its first writes is rolled back to its savepoint: no status change, event or history of it', async () => {
    const ids = await insertObjects(t.database, place, Array.from({ length: 50 }, (_, i) => ({ status: 'Booked' as const, timer: ago(20 * MIN + i * 1000) })));
    const poison = ids[30];
    // the object row, its outbox event and history row are written before hold_releases refuses it
    await t.database.sql.unsafe(`
      CREATE FUNCTION test_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.property_object_id = '${poison}' THEN RAISE EXCEPTION 'poison row' USING ERRCODE = 'check_violation'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_poison BEFORE INSERT ON chessboard.hold_releases FOR EACH ROW EXECUTE FUNCTION test_poison();`);
    expect(await run()).toMatchObject({ BookedReleasedCount: 49, Errors: 1 });
    expect(await readObject(t.database, poison)).toMatchObject({ status: 'Booked', version: 1, status_source: 'Crm' });
    expect(await statusChangedEvents(t.database, poison)).toHaveLength(0);
    expect(await t.database.sql`SELECT 1 FROM chessboard.property_object_status_history WHERE property_object_id = ${poison}`).toHaveLength(0);
    expect(await statusChangedEvents(t.database)).toHaveLength(49);
    expect(t.logLines().find((l) => l.msg === 'item failed')).toMatchObject({ propertyObjectId: poison, err: { code: '23514' } });
  });

  it('stop requested mid-batch → the batch in hand commits whole, the next phase is left for the next cycle', async () => {
    await insertObjects(t.database, place, [
      ...Array.from({ length: 50 }, (_, i) => ({ status: 'Reserved' as const, timer: ago(20 * MIN + i * 1000) })),
      ...Array.from({ length: 10 }, () => ({ status: 'Booked' as const, timer: ago(20 * MIN) })),
    ]);
    const stop = new AbortController();
    let seen = 0;
    const job = createPropertyObjectHoldExpirationJob({
      now: fixedNow,
      guard: (o) => {
        if (++seen === 25) stop.abort(); // StopAsync in the middle of the batch
        return expirationJobGuard(o);
      },
    });
    const summary = await run(job, { signal: stop.signal });
    expect(summary).toMatchObject({ ReservedReleasedCount: 50, BookedReleasedCount: 0, Stopped: true });
    const [counts] = await t.database.sql`
      SELECT count(*) FILTER (WHERE status = 'Free')::int AS free, count(*) FILTER (WHERE status = 'Booked')::int AS booked FROM chessboard.property_objects`;
    expect(counts).toEqual({ free: 50, booked: 10 });
    expect(await statusChangedEvents(t.database)).toHaveLength(50);
  });

  it('infrastructure error mid-batch → the whole batch rolls back, locks are released, the run fails; the next cycle retries', async () => {
    await insertObjects(t.database, place, Array.from({ length: 50 }, (_, i) => ({ status: 'Reserved' as const, timer: ago(20 * MIN + i * 1000) })));
    const victim = createDatabase(t.url, { max: 2, applicationName: 'hold-exp-victim' });
    let seen = 0;
    const job = createPropertyObjectHoldExpirationJob({
      now: fixedNow,
      guard: async (o) => {
        if (++seen === 25) {
          // the job's connection dies in the middle of the batch
          await t.database.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'hold-exp-victim' AND datname = current_database()`;
          await new Promise((r) => setTimeout(r, 300)); // let the client see its socket close
        }
        return expirationJobGuard(o);
      },
    });
    try {
      const result = await runJobCycle(job, { database: victim, env: t.env, logger: t.logger, kafka: jobContext(t).kafka, signal: new AbortController().signal }, 'manual');
      expect(result.status).toBe('failed');
      const [jobRun] = await t.database.sql`SELECT status, error FROM ops.job_runs WHERE run_id = ${result.runId}`;
      expect(jobRun.status).toBe('failed');
    } finally {
      await victim.close();
    }
    expect((await allObjects()).every((o) => o.status === 'Reserved' && o.version === 1)).toBe(true);
    expect(await statusChangedEvents(t.database)).toHaveLength(0);
    expect(await t.database.sql`SELECT 1 FROM chessboard.hold_releases`).toHaveLength(0);
    expect(t.logLines().filter((l) => l.msg === 'lost CRM release')).toHaveLength(0); // nothing was released
    // no lock survived the failed batch
    await t.database.db.transaction(async (tx) => {
      const locked = await selectExpiredHoldsForUpdate(tx, 'reserved', ago(10 * MIN), 1000);
      expect(locked).toHaveLength(50);
    });
    expect(await run()).toMatchObject({ ReservedReleasedCount: 50 });
  });
});

describe('property-object-hold-expiration: plan, metrics, logs, schedule', () => {
  it('both phase queries use their partial indexes (EXPLAIN)', async () => {
    await insertObjects(t.database, place, [
      ...Array.from({ length: 5000 }, () => ({ status: 'Free' as const })),
      ...Array.from({ length: 100 }, (_, i) => ({ status: 'Reserved' as const, timer: ago(i * MIN) })),
      ...Array.from({ length: 100 }, (_, i) => ({ status: 'Booked' as const, timer: ago(i * MIN) })),
    ]);
    // VACUUM too: it sets the visibility map, as autovacuum does for a table that is mostly at rest —
    // without it every heap page counts as unvisited and the planner never picks an Index Only Scan
    await t.database.sql`VACUUM (ANALYZE) chessboard.property_objects`;
    for (const [phase, index] of [['reserved', 'ix_property_objects_reserved_until'], ['booked', 'ix_property_objects_booked_until']] as const) {
      const q = selectExpiredHoldsForUpdate(t.database.db, phase, ago(10 * MIN), 200).toSQL();
      const plan = (await t.database.sql.unsafe(`EXPLAIN ${q.sql}`, q.params as never[])).map((r) => r['QUERY PLAN']).join('\n');
      expect(plan, plan).toContain(index);
      expect(plan).not.toMatch(/Seq Scan/);
      // the backlog / skipped-locked count reads the index alone (no heap visit per stuck hold)
      const upTo = { timer: ago(20 * MIN), id: '00000000-0000-4000-8000-000000000000' };
      for (const bound of [undefined, upTo]) {
        const cq = expiredHoldsCountQuery(t.database.db, phase, ago(10 * MIN), bound).toSQL();
        const countPlan = (await t.database.sql.unsafe(`EXPLAIN ${cq.sql}`, cq.params as never[])).map((r) => r['QUERY PLAN']).join('\n');
        expect(countPlan, countPlan).toContain(`Index Only Scan using ${index}`);
      }
    }
  });

  it('a batch reads `limit` index entries in order, not every expired hold (the status term is not in the predicate)', async () => {
    // a backlog among many objects (the bench's shape): 20,000 objects, every 10th an expired hold
    // (1,000 Reserved, 1,000 Booked), the rest Free / Sold / Hidden. With `status = X AND timer < cutoff`
    // the planner multiplied the two selectivities, expected ~50 rows and chose a BitmapAnd with
    // ix_property_objects_project_status + Sort: every expired hold fetched for a batch of 200.
    await insertObjects(t.database, place, Array.from({ length: 20_000 }, (_, i) => (
      i % 10 === 0 ? { status: i % 20 === 0 ? 'Reserved' as const : 'Booked' as const, timer: ago((20 + (i % 997)) * MIN) }
        : { status: i % 10 === 3 ? 'Sold' as const : i % 50 === 9 ? 'Hidden' as const : 'Free' as const })));
    await t.database.sql`VACUUM (ANALYZE) chessboard.property_objects`;
    for (const [phase, index] of [['reserved', 'ix_property_objects_reserved_until'], ['booked', 'ix_property_objects_booked_until']] as const) {
      const q = selectExpiredHoldsForUpdate(t.database.db, phase, ago(10 * MIN), 200).toSQL();
      const plan = (await t.database.sql.unsafe(`EXPLAIN ${q.sql}`, q.params as never[])).map((r) => r['QUERY PLAN']).join('\n');
      expect(plan, plan).toContain(`Index Scan using ${index}`);
      expect(plan, plan).not.toMatch(/Sort|Bitmap/);
      // and the rows are the same: every expired hold of the phase is a candidate, oldest first
      const rows = await t.database.db.transaction((tx) => selectExpiredHoldsForUpdate(tx, phase, ago(10 * MIN), 5000));
      expect(rows).toHaveLength(1000);
      expect(rows.every((r) => r.status === (phase === 'reserved' ? 'Reserved' : 'Booked'))).toBe(true);
    }
  });

  it('a phase runs as prepared statements of fixed text (the writes as one), and the candidate query\'s generic plan is the ordered partial-index scan', async () => {
    // the bench's shape: 20,000 objects, every 10th an expired hold (1,000 Reserved, 1,000 Booked)
    await insertObjects(t.database, place, Array.from({ length: 20_000 }, (_, i) => (
      i % 10 === 0 ? { status: i % 20 === 0 ? 'Reserved' as const : 'Booked' as const, timer: ago((20 + (i % 997)) * MIN) }
        : { status: i % 10 === 3 ? 'Sold' as const : i % 50 === 9 ? 'Hidden' as const : 'Free' as const })));
    await t.database.sql`VACUUM (ANALYZE) chessboard.property_objects`;
    // one connection, so that its pg_prepared_statements are the job's
    const single = createDatabase(t.url, { max: 1, applicationName: 'hold-exp-prepared' });
    try {
      for (let cycle = 0; cycle < 2; cycle++) expect(await run(undefined, { database: single })).toMatchObject({ ReservedReleasedCount: 200, BookedReleasedCount: 200 });
      const prepared = (await single.sql<{ statement: string }[]>`SELECT statement FROM pg_prepared_statements`).map((r) => r.statement);
      // candidates per phase, the skipped-locked counts, the batch's writes: one statement each, reused by the second cycle
      expect(prepared.filter((q) => /for update skip locked/i.test(q))).toHaveLength(2);
      expect(prepared.filter((q) => /count\(\*\)/.test(q) && !/INSERT/.test(q)).length).toBeGreaterThanOrEqual(2);
      const writes = prepared.filter((q) => /INSERT INTO "chessboard"."hold_releases"/.test(q));
      expect(writes).toHaveLength(1);
      expect(writes[0]).toMatch(/UPDATE "chessboard"."property_objects"/);
      expect(writes[0]).toMatch(/INSERT INTO "chessboard"."outbox"/);
      expect(writes[0]).toMatch(/INSERT INTO "chessboard"."property_object_status_history"/);
      expect(writes[0]).toMatch(/UPDATE "chessboard"."projects"/);
      expect(writes[0]).toMatch(/pg_notify/);
      // the rows a cycle writes are all there: 400 releases, events, history rows
      const [counts] = await t.database.sql`SELECT (SELECT count(*) FROM chessboard.hold_releases)::int AS releases,
        (SELECT count(*) FROM chessboard.outbox)::int AS events, (SELECT count(*) FROM chessboard.property_object_status_history)::int AS history`;
      expect(counts).toEqual({ releases: 800, events: 800, history: 800 });
    } finally {
      await single.close();
    }
    // a prepared statement may run with a generic plan (cutoff and limit unknown): it must still read the
    // phase's partial index in order, not fetch every expired hold and sort them
    const reserved = t.database.sql.reserve();
    const conn = await reserved;
    try {
      for (const [phase, index] of [['reserved', 'ix_property_objects_reserved_until'], ['booked', 'ix_property_objects_booked_until']] as const) {
        const q = selectExpiredHoldsForUpdate(t.database.db, phase, sql.placeholder('cutoff'), sql.placeholder('limit')).toSQL();
        await conn.unsafe(`PREPARE candidates_${phase} AS ${q.sql}`);
        await conn.unsafe(`SET plan_cache_mode = force_generic_plan`);
        const plan = (await conn.unsafe(`EXPLAIN EXECUTE candidates_${phase}('${ago(10 * MIN).toISOString()}', 200)`)).map((r) => r['QUERY PLAN']).join('\n');
        expect(plan, plan).toContain(`Index Scan using ${index}`);
        expect(plan, plan).not.toMatch(/Sort|Bitmap|Seq Scan/);
      }
    } finally {
      conn.release();
    }
  });

  it('metrics: after a cycle the registry shows the runs, released counts per phase, backlog, skip-locked, errors and duration', async () => {
    const names = [
      'chessboard_property_object_hold_expiration_run_total',
      'chessboard_property_object_hold_expiration_items_total{phase="reserved"}',
      'chessboard_property_object_hold_expiration_items_total{phase="booked"}',
      'chessboard_property_object_hold_expiration_skip_locked_total',
      'chessboard_property_object_hold_expiration_errors_total',
      'chessboard_property_object_hold_expiration_cycle_duration_seconds_count',
    ];
    const before = await Promise.all(names.map(metricValue));
    await insertObjects(t.database, place, [
      ...Array.from({ length: 3 }, () => ({ status: 'Reserved' as const, timer: ago(30 * MIN) })),
      ...Array.from({ length: 2 }, () => ({ status: 'Booked' as const, timer: ago(30 * MIN) })),
    ]);
    const env = { ...t.env, HOLD_EXPIRATION_BATCH_SIZE: 2 };
    await createPropertyObjectHoldExpirationJob({ now: fixedNow }).run({ ...jobContext(t), env });
    const after = await Promise.all(names.map(metricValue));
    expect(after.map((v, i) => v - before[i])).toEqual([1, 2, 2, 0, 0, 1]);
    expect(await metricValue('chessboard_property_object_hold_expiration_backlog')).toBe(1);
  });

  it('the backlog gauge is computed at scrape time when a database is bound', async () => {
    await insertObjects(t.database, place, [
      { status: 'Reserved', timer: new Date(Date.now() - 60 * MIN) },
      { status: 'Booked', timer: new Date(Date.now() - 60 * MIN) },
      { status: 'Booked', timer: new Date(Date.now() - 1 * MIN) },
    ]);
    bindHoldExpirationMetrics(t.database, t.env.HOLD_EXPIRATION_GRACE_MS);
    try {
      expect(await metricValue('chessboard_property_object_hold_expiration_backlog')).toBe(2);
    } finally {
      unbindHoldExpirationMetrics();
    }
  });

  it('logs: cycle started, batch selected, WARN "lost CRM release" per object with its fields, cycle completed', async () => {
    const deal = randomUUID();
    const [id] = await insertObjects(t.database, place, [{ status: 'Booked', timer: ago(25 * MIN), holdDealId: deal }]);
    const runId = randomUUID();
    await run(undefined, { runId });
    const lines = t.logLines();
    expect(lines.find((l) => l.msg === 'cycle started')).toMatchObject({ runId, asOf: AS_OF.toISOString(), holdGraceMs: 600_000 });
    expect(lines.filter((l) => l.msg === 'batch selected').map((l) => [l.phase, l.count])).toEqual([['reserved', 0], ['booked', 1]]);
    const warn = lines.filter((l) => l.msg === 'lost CRM release');
    expect(warn).toHaveLength(1);
    expect(warn[0]).toMatchObject({
      level: 'warn', propertyObjectId: id, tenantId: place.tenantId, projectId: place.projectId, holdDealId: deal, fromStatus: 'Booked',
      expiredTimer: 'BookedUntil', expiredTimerAt: ago(25 * MIN).toISOString(), overdueByMs: 25 * MIN,
    });
    expect(lines.find((l) => l.msg === 'cycle completed')).toMatchObject({ runId, reservedReleasedCount: 0, bookedReleasedCount: 1, skippedLocked: 0, durationMs: expect.any(Number) });
  });

  it('is scheduled by HOLD_EXPIRATION_SCHEDULE in UTC, every 60 s by default', () => {
    expect(propertyObjectHoldExpirationJob.name).toBe('property-object-hold-expiration');
    expect(propertyObjectHoldExpirationJob.schedule(t.env)).toEqual({ cron: '30 * * * * *', timezone: 'UTC' });
    expect(t.env.HOLD_EXPIRATION_GRACE_MS).toBe(10 * MIN);
  });
});

async function metricValue(name: string): Promise<number> {
  const { body } = await renderMetrics();
  const line = body.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}
