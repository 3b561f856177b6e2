import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTenant, insertUser, TEST_PASSWORD } from '../../test/fixtures/auth.fixtures';
import { actor, callerFor, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { registry } from '../platform/metrics';
import { outboxNotices } from '../platform/outbox/write';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { createTestContext, routeHandlersOn, type TestContext } from '../../test/harness/harness';
import { eventually, insertObjects, insertProject } from '../../test/fixtures/chessboard.fixtures';
import { ensureLiveListener, liveFeedStats, openLiveStream, type LiveEvent, type LiveStream } from './live-feed';

let t: TestContext;
let restore: (() => Promise<void>) | undefined;
beforeAll(async () => {
  t = await createTestContext();
  restore = routeHandlersOn(t);
  await ensureLiveListener(t.database, t.logger);
});
afterAll(async () => {
  await restore?.();
  await t?.close();
});

/** A stream of the hub that records what it is told. */
async function testStream(tenantId: string | null, building: { id: string; tenantId: string } | null = null) {
  const events: LiveEvent[] = [];
  const stream: LiveStream = { tenantId, revocationKey: randomUUID(), building, notify: (e) => events.push(e), revoked: () => {} };
  const close = await openLiveStream(stream);
  return { events, close };
}

/**
 * Holds an ACCESS EXCLUSIVE lock on chessboard.property_objects (so every fingerprint SELECT waits) until
 * `release()`; with `changeBuildingId` the same transaction also bumps that building's versions, so exactly
 * one of a blocked read and the read after it sees a new fingerprint. Resolves once the lock is held.
 */
async function holdPropertyObjectsLock(changeBuildingId?: string): Promise<{ release: () => void; holder: Promise<unknown> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => { release = r; });
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => { locked = r; });
  const holder = t.database.sql.begin(async (tx) => {
    await tx`LOCK TABLE chessboard.property_objects IN ACCESS EXCLUSIVE MODE`;
    if (changeBuildingId) await tx`UPDATE chessboard.property_objects SET version = version + 1 WHERE building_id = ${changeBuildingId}`;
    locked();
    await released;
  });
  await isLocked;
  return { release, holder };
}

async function fingerprintReads(): Promise<number> {
  const metric = registry.getSingleMetric('pin_live_feed_fingerprint_reads_total')!;
  return (await metric.get()).values[0]?.value ?? 0;
}

describe('live feed (LISTEN on the outbox channels)', () => {
  it('signals the tenant\'s streams within 1 s of a chessboard outbox commit, and not before the commit', async () => {
    const tenant = randomUUID();
    let committedAt = 0;
    let early = false;
    let receivedAt = 0;
    const events: LiveEvent[] = [];
    const close = await openLiveStream({
      tenantId: tenant, revocationKey: randomUUID(), building: null, revoked: () => {},
      notify: (e) => {
        events.push(e);
        if (e !== 'chessboard') return;
        if (committedAt === 0) early = true;
        receivedAt ||= Date.now();
      },
    });
    const [notice] = outboxNotices([{ tenantId: tenant, payload: {} }]);
    await t.database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_notify('pin_outbox_chessboard', ${notice!})`);
      await new Promise((r) => setTimeout(r, 150)); // NOTIFY is delivered at commit, not now
      // the COMMIT goes out right after this callback returns; its answer (on this connection) and the
      // notification (on the listener's) may then arrive in either order, so "early" means before this
      committedAt = Date.now();
    });
    await eventually(async () => receivedAt > 0, 10_000, 'the chessboard signal');
    close();
    expect(early).toBe(false);
    expect(receivedAt - committedAt).toBeLessThan(1000);
  });

  it('a tenant\'s command reaches only that tenant\'s streams (and the all-tenant ones): tenant B hears nothing of tenant A', async () => {
    const [tenantA, tenantB] = [randomUUID(), randomUUID()];
    const [a, b, all] = [await testStream(tenantA), await testStream(tenantB), await testStream(null)];
    const programA = await insertProgram(t, tenantA);
    const dealA = await insertDeal(t, tenantA);
    await callerFor(t, actor('agent', tenantA)).booking.create({ dealId: dealA.id, propertyObjectId: await projectedObjectOf(t.database, tenantA), programId: programA.id });
    // one notice is delivered to every stream in one synchronous pass: once A heard it, B would have too
    await eventually(async () => a.events.includes('crm'), 10_000, 'tenant A hears its booking');
    expect(all.events).toContain('crm');
    expect(b.events).toEqual([]);
    // and B's stream is live: it hears its own tenant's command
    const programB = await insertProgram(t, tenantB);
    const dealB = await insertDeal(t, tenantB);
    await callerFor(t, actor('agent', tenantB)).booking.create({ dealId: dealB.id, propertyObjectId: await projectedObjectOf(t.database, tenantB), programId: programB.id });
    await eventually(async () => b.events.includes('crm'), 10_000, 'tenant B hears its booking');
    for (const s of [a, b, all]) s.close();
  });

  it('N streams on one building: one chessboard commit costs one fingerprint read, and all of them get grid; another tenant\'s commit costs none', async () => {
    const place = await insertProject(t.database, await insertTenant(t.database.db));
    const [held] = await insertObjects(t.database, place, [{ status: 'Reserved' }, { status: 'Free' }]);
    const building = { id: place.buildingId, tenantId: place.tenantId };
    const streams: Awaited<ReturnType<typeof testStream>>[] = [];
    for (let i = 0; i < 5; i++) streams.push(await testStream(i === 4 ? null : place.tenantId, building));
    const other = await insertProject(t.database, await insertTenant(t.database.db));
    const [otherHeld] = await insertObjects(t.database, other, [{ status: 'Reserved' }]);

    const before = await fingerprintReads();
    const ops = callerFor(t, actor('ops', null));
    // another tenant's commit on another building: no read for this watch
    await ops.chessboard.releaseHold({ propertyObjectId: otherHeld!, reason: 'live feed test' });
    await ops.chessboard.releaseHold({ propertyObjectId: held!, reason: 'live feed test' });
    await eventually(async () => streams.every((s) => s.events.includes('grid')), 10_000, 'grid on every stream of the building');
    expect(await fingerprintReads()).toBe(before + 1);
    for (const s of streams) {
      expect(s.events.filter((e) => e === 'grid')).toHaveLength(1);
      s.close();
    }
  });

  it('a burst of K commits while a fingerprint read is in flight costs ONE more read (not K), and every one of N streams gets grid once', async () => {
    const place = await insertProject(t.database, await insertTenant(t.database.db));
    await insertObjects(t.database, place, [{ status: 'Free' }, { status: 'Reserved' }]);
    const building = { id: place.buildingId, tenantId: place.tenantId };
    const streams: Awaited<ReturnType<typeof testStream>>[] = [];
    for (let i = 0; i < 20; i++) streams.push(await testStream(place.tenantId, building));
    // hears every chessboard notice of the tenant: once it heard the K-th, the hub has handled all K
    const sentinel = await testStream(place.tenantId);
    const before = await fingerprintReads();

    // hold the read: an ACCESS EXCLUSIVE lock blocks the fingerprint SELECT until this transaction ends;
    // the same transaction changes the building, so exactly one of the two reads sees a new fingerprint
    const { release, holder } = await holdPropertyObjectsLock(place.buildingId);
    const K = 10;
    const [notice] = outboxNotices([{ tenantId: place.tenantId, payload: { buildingId: place.buildingId } }]);
    for (let i = 0; i < K; i++) await t.database.sql`SELECT pg_notify('pin_outbox_chessboard', ${notice!})`;
    await eventually(async () => sentinel.events.filter((e) => e === 'chessboard').length === K, 10_000, `the sentinel hears all ${K} notices`);
    expect(await fingerprintReads()).toBe(before + 1); // the first notice's read, blocked; the other K-1 only marked the watch dirty
    release();
    await holder;

    await eventually(async () => streams.every((s) => s.events.includes('grid')), 10_000, 'grid on every stream of the building');
    await new Promise((r) => setTimeout(r, 300)); // room for any further (wrong) read
    expect(await fingerprintReads()).toBe(before + 2);
    for (const s of streams) expect(s.events.filter((e) => e === 'grid')).toHaveLength(1);
    for (const s of [...streams, sentinel]) s.close();
  });

  it('commits arriving during a new watch\'s first read cost one read after it, not one each alongside it', async () => {
    const place = await insertProject(t.database, await insertTenant(t.database.db));
    await insertObjects(t.database, place, [{ status: 'Free' }]);
    const sentinel = await testStream(place.tenantId);
    const before = await fingerprintReads();
    const { release, holder } = await holdPropertyObjectsLock();
    const opening = testStream(place.tenantId, { id: place.buildingId, tenantId: place.tenantId }); // its first read blocks
    await eventually(async () => (await fingerprintReads()) === before + 1, 10_000, 'the first read started');
    const [notice] = outboxNotices([{ tenantId: place.tenantId, payload: { buildingId: place.buildingId } }]);
    for (let i = 0; i < 5; i++) await t.database.sql`SELECT pg_notify('pin_outbox_chessboard', ${notice!})`;
    await eventually(async () => sentinel.events.filter((e) => e === 'chessboard').length === 5, 10_000, 'the sentinel hears the 5 notices');
    expect(await fingerprintReads()).toBe(before + 1);
    release();
    await holder;
    const stream = await opening;
    await new Promise((r) => setTimeout(r, 300));
    expect(await fingerprintReads()).toBe(before + 2);
    expect(stream.events).toEqual([]); // nothing changed since the first read
    stream.close();
    sentinel.close();
  });

  it('the last stream of a building to close frees its watch: the building is forgotten and its commits cost no read', async () => {
    const place = await insertProject(t.database, await insertTenant(t.database.db));
    const [held] = await insertObjects(t.database, place, [{ status: 'Reserved' }]);
    const building = { id: place.buildingId, tenantId: place.tenantId };
    const base = liveFeedStats();
    const streams = [await testStream(place.tenantId, building), await testStream(place.tenantId, building), await testStream(null, building)];
    expect(liveFeedStats()).toEqual({ streams: base.streams + 3, watchedBuildings: base.watchedBuildings + 1 });
    streams[0]!.close();
    streams[1]!.close();
    expect(liveFeedStats()).toEqual({ streams: base.streams + 1, watchedBuildings: base.watchedBuildings + 1 });
    streams[2]!.close();
    expect(liveFeedStats()).toEqual(base);

    const sentinel = await testStream(place.tenantId);
    const before = await fingerprintReads();
    await callerFor(t, actor('ops', null)).chessboard.releaseHold({ propertyObjectId: held!, reason: 'live feed test' });
    await eventually(async () => sentinel.events.includes('chessboard'), 10_000, 'the commit\'s notice');
    expect(await fingerprintReads()).toBe(before);
    for (const s of streams) expect(s.events).not.toContain('grid');
    sentinel.close();
  });

  it('two tenants\' buildings stay separate: a commit reads and signals only its own building\'s streams, and a notice naming a building of another tenant reads nothing', async () => {
    const a = await insertProject(t.database, await insertTenant(t.database.db));
    const b = await insertProject(t.database, await insertTenant(t.database.db));
    const [heldA] = await insertObjects(t.database, a, [{ status: 'Reserved' }]);
    const [heldB] = await insertObjects(t.database, b, [{ status: 'Reserved' }]);
    const onA = [await testStream(a.tenantId, { id: a.buildingId, tenantId: a.tenantId }), await testStream(null, { id: a.buildingId, tenantId: a.tenantId })];
    const onB = [await testStream(b.tenantId, { id: b.buildingId, tenantId: b.tenantId }), await testStream(b.tenantId, { id: b.buildingId, tenantId: b.tenantId })];
    const sentinelB = await testStream(b.tenantId);
    const ops = callerFor(t, actor('ops', null));

    let before = await fingerprintReads();
    await ops.chessboard.releaseHold({ propertyObjectId: heldA!, reason: 'live feed test' });
    await eventually(async () => onA.every((s) => s.events.includes('grid')), 10_000, 'grid on building A\'s streams');
    expect(await fingerprintReads()).toBe(before + 1);
    for (const s of onB) expect(s.events).toEqual([]);

    // tenant B's notice naming tenant A's building: the watch belongs to A, so no read and no grid
    before = await fingerprintReads();
    const [forged] = outboxNotices([{ tenantId: b.tenantId, payload: { buildingId: a.buildingId } }]);
    await t.database.sql`SELECT pg_notify('pin_outbox_chessboard', ${forged!})`;
    await eventually(async () => sentinelB.events.includes('chessboard'), 10_000, 'the forged notice');
    expect(await fingerprintReads()).toBe(before);

    await ops.chessboard.releaseHold({ propertyObjectId: heldB!, reason: 'live feed test' });
    await eventually(async () => onB.every((s) => s.events.includes('grid')), 10_000, 'grid on building B\'s streams');
    expect(await fingerprintReads()).toBe(before + 1);
    for (const s of onA) expect(s.events.filter((e) => e === 'grid')).toHaveLength(1);
    for (const s of [...onA, ...onB, sentinelB]) s.close();
  });
});

describe('sign-out ends the session\'s open streams', () => {
  it('GET /api/events, then auth.signOut through the real route: the stream ends within 2 s (not at the 60 s session re-check)', async () => {
    const { GET: events } = await import('@/app/api/events/route');
    const { POST } = await import('@/app/api/trpc/[trpc]/route');
    const origin = { host: 'localhost', origin: 'http://localhost' };
    const user = await insertUser(t.database.db, 'viewer', await insertTenant(t.database.db));
    const signIn = await POST(new Request('http://localhost/api/trpc/auth.signIn', {
      method: 'POST', headers: { ...origin, 'content-type': 'application/json' },
      body: JSON.stringify(superjson.serialize({ email: user.email, password: TEST_PASSWORD })),
    }));
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;

    const res = await events(new Request('http://localhost/api/events', { headers: { cookie } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('no-store');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('event: ready')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before ready: ${text}`);
      text += decoder.decode(value);
    }

    const signOut = await POST(new Request('http://localhost/api/trpc/auth.signOut', {
      method: 'POST', headers: { ...origin, cookie, 'content-type': 'application/json' }, body: JSON.stringify(superjson.serialize(null)),
    }));
    expect(signOut.status).toBe(200);
    const signedOutAt = Date.now();
    const ended = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return Date.now();
        text += decoder.decode(value);
      }
    })();
    const deadline = new Promise<'open'>((r) => setTimeout(() => r('open'), 2000));
    const outcome = await Promise.race([ended, deadline]);
    if (outcome === 'open') await reader.cancel();
    expect(outcome, 'the stream is still open 2 s after sign-out').not.toBe('open');
    expect((outcome as number) - signedOutAt).toBeLessThanOrEqual(2000);
    expect(text).toContain('event: signed-out');
  });
});
