import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DAY_MS, insertObjectCard, insertProjectCard } from '../../../test/fixtures/catalog.fixtures';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { closeOpsKafka } from './kafka-admin';
import { readTrends } from './metric-samples';
import { getOverview, SERIES } from './overview';
import { getLostReleaseCounts, getStuckHoldsSummary, holdReleaseHistogram, listHoldReleases, listStuckHolds } from './hold-queries';
import { getOutboxStats, listFailingOutboxRows } from './messaging-queries';
import {
  actorOf, auditRows, DAY, errorOf, HOUR, insertBooking, insertHoldRelease, insertJobRun, insertObject, insertOutboxRow, insertWorld,
  MIN, opsCaller, type World,
} from '../../../test/fixtures/ops-dashboard.fixtures';

let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await closeOpsKafka(); await t?.close(); });
beforeEach(async () => {
  await t.database.sql`TRUNCATE chessboard.property_objects, chessboard.hold_releases, chessboard.hold_mismatches, chessboard.property_object_status_history,
    chessboard.outbox, crm.outbox, crm.bookings, crm.booking_timeline, ops.job_runs, ops.metric_samples, ops.audit_log, ops.job_controls,
    catalog.property_object_cards, catalog.project_cards, ops.reconciliation_findings, ops.reconciliation_state CASCADE`;
});

const GRACE = 10 * MIN;

/** Overdue holds at fixed distances from `now`: 2 in grace, 3 past grace (1 Booked), plus ones that are not overdue. */
async function seedHolds(w: World, now: Date) {
  const inGraceA = await insertObject(t.database, w, { status: 'Reserved', timer: new Date(now.getTime() - 2 * MIN) });
  const inGraceB = await insertObject(t.database, w, { status: 'Booked', timer: new Date(now.getTime() - 9 * MIN) });
  const pastA = await insertObject(t.database, w, { status: 'Reserved', timer: new Date(now.getTime() - 11 * MIN) });
  const pastB = await insertObject(t.database, w, { status: 'Booked', timer: new Date(now.getTime() - 3 * HOUR) });
  const pastC = await insertObject(t.database, w, { status: 'Reserved', timer: new Date(now.getTime() - 2 * DAY) });
  await insertObject(t.database, w, { status: 'Reserved', timer: new Date(now.getTime() + 5 * MIN) });
  await insertObject(t.database, w, { status: 'Booked', timer: new Date(now.getTime() + DAY) });
  await insertObject(t.database, w, { status: 'Free' });
  await insertObject(t.database, w, { status: 'Sold' });
  return { inGraceA, inGraceB, pastA, pastB, pastC };
}

describe('stuck holds', () => {
  it('counts overdue holds in grace and past grace (= the hold-expiration backlog), per tenant scope', async () => {
    const now = new Date('2026-06-01T12:00:00Z');
    const a = await insertWorld(t.database, 'A');
    const b = await insertWorld(t.database, 'B');
    const holds = await seedHolds(a, now);
    await insertObject(t.database, b, { status: 'Reserved', timer: new Date(now.getTime() - HOUR) });
    const all = await getStuckHoldsSummary(t.database.db, { now, graceMs: GRACE, scope: null });
    expect(all).toEqual({ inGrace: 2, pastGrace: 4, oldestTimer: new Date(now.getTime() - 2 * DAY), graceMs: GRACE });
    // a minute earlier pastA is exactly at timer + grace: still in grace (the job selects timer + grace < AsOf)
    const atBoundary = await getStuckHoldsSummary(t.database.db, { now: new Date(now.getTime() - MIN), graceMs: GRACE, scope: a.tenantId });
    expect(atBoundary).toMatchObject({ inGrace: 3, pastGrace: 2 });
    expect(await getStuckHoldsSummary(t.database.db, { now, graceMs: GRACE, scope: b.tenantId })).toMatchObject({ inGrace: 0, pastGrace: 1 });
    void holds;
  });

  it('lists overdue holds with project, tenant, timer, overdue-by, hold deal and whether crm still has an active booking; sorts and filters', async () => {
    const now = new Date('2026-06-01T12:00:00Z');
    const a = await insertWorld(t.database, 'Alpha');
    const h = await seedHolds(a, now);
    // crm still holds pastB actively (a lost confirm/extend, not a lost release); pastA's booking expired in crm
    const active = await insertBooking(t.database, a, { propertyObjectId: h.pastB.id, dealId: h.pastB.holdDealId!, status: 'Booked' });
    const expired = await insertBooking(t.database, a, { propertyObjectId: h.pastA.id, dealId: h.pastA.holdDealId!, status: 'ReserveExpired' });

    const rows = await listStuckHolds(t.database.db, { now, graceMs: GRACE, scope: null });
    expect(rows.map((r) => r.propertyObjectId)).toEqual([h.pastC.id, h.pastB.id, h.pastA.id, h.inGraceB.id, h.inGraceA.id]);
    const b = rows.find((r) => r.propertyObjectId === h.pastB.id)!;
    expect(b).toMatchObject({
      number: h.pastB.number, tenantName: 'Alpha', projectName: 'Project of Alpha', status: 'Booked', timer: new Date(now.getTime() - 3 * HOUR),
      overdueByMs: 3 * HOUR, pastGrace: true, holdDealId: h.pastB.holdDealId,
      crmActiveBooking: { id: active.id, status: 'Booked', dealId: active.dealId, holdsThisDeal: true },
      holdBooking: { id: active.id, status: 'Booked' },
    });
    const aRow = rows.find((r) => r.propertyObjectId === h.pastA.id)!;
    expect(aRow).toMatchObject({ overdueByMs: 11 * MIN, pastGrace: true, crmActiveBooking: null, holdBooking: { id: expired.id, status: 'ReserveExpired' } });
    expect(rows.find((r) => r.propertyObjectId === h.inGraceA.id)).toMatchObject({ pastGrace: false, overdueByMs: 2 * MIN });

    const past = await listStuckHolds(t.database.db, { now, graceMs: GRACE, scope: null, filter: { phase: 'pastGrace', sort: 'overdue', dir: 'asc' } });
    expect(past.map((r) => r.propertyObjectId)).toEqual([h.pastA.id, h.pastB.id, h.pastC.id]);
    const booked = await listStuckHolds(t.database.db, { now, graceMs: GRACE, scope: null, filter: { status: 'Booked' } });
    expect(booked.map((r) => r.propertyObjectId).sort()).toEqual([h.pastB.id, h.inGraceB.id].sort());
    const withCrm = await listStuckHolds(t.database.db, { now, graceMs: GRACE, scope: null, filter: { crmActive: 'yes' } });
    expect(withCrm.map((r) => r.propertyObjectId)).toEqual([h.pastB.id]);
    const byNumber = await listStuckHolds(t.database.db, { now, graceMs: GRACE, scope: null, filter: { number: h.pastC.number, sort: 'number', dir: 'asc' } });
    expect(byNumber.map((r) => r.propertyObjectId)).toEqual([h.pastC.id]);
    expect(await listStuckHolds(t.database.db, { now, graceMs: GRACE, scope: randomUUID() })).toEqual([]);
  });
});

describe('lost releases', () => {
  it('counts safety-net releases in the last hour / day / week, lists them with their booking and buckets them over time', async () => {
    const now = new Date('2026-06-01T12:30:00Z');
    const a = await insertWorld(t.database, 'A');
    const obj = await insertObject(t.database, a, { status: 'Free' });
    const dealId = randomUUID();
    const booking = await insertBooking(t.database, a, { propertyObjectId: obj.id, dealId, status: 'ReserveExpired', createdAt: new Date(now.getTime() - 2 * HOUR), updatedAt: new Date(now.getTime() - HOUR) });
    await insertHoldRelease(t.database, a, { propertyObjectId: obj.id, holdDealId: dealId, releasedAt: new Date(now.getTime() - 30 * MIN), overdueByMs: 12 * MIN });
    await insertHoldRelease(t.database, a, { propertyObjectId: obj.id, releasedAt: new Date(now.getTime() - 5 * HOUR) });
    await insertHoldRelease(t.database, a, { propertyObjectId: obj.id, releasedAt: new Date(now.getTime() - 3 * DAY) });
    await insertHoldRelease(t.database, a, { propertyObjectId: obj.id, releasedAt: new Date(now.getTime() - 10 * DAY) });
    await insertHoldRelease(t.database, a, { propertyObjectId: obj.id, releasedAt: new Date(now.getTime() - 10 * MIN), source: 'Manual' });

    expect(await getLostReleaseCounts(t.database.db, { now, scope: null })).toEqual({ lastHour: 1, lastDay: 2, lastWeek: 3 });
    expect(await getLostReleaseCounts(t.database.db, { now, scope: randomUUID() })).toEqual({ lastHour: 0, lastDay: 0, lastWeek: 0 });

    const rows = await listHoldReleases(t.database.db, { now, scope: null, sinceMs: 7 * DAY });
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({
      statusSource: 'ExpirationJob', propertyObjectId: obj.id, number: obj.number, holdDealId: dealId, fromStatus: 'Reserved',
      overdueByMs: 12 * MIN, expiredTimerAt: new Date(now.getTime() - 42 * MIN), bookingId: booking.id, tenantId: a.tenantId, projectName: 'Project of A',
    });
    expect(rows[0]!.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await listHoldReleases(t.database.db, { now, scope: null, source: 'Manual' })).map((r) => r.statusSource)).toEqual(['Manual']);
    expect(await listHoldReleases(t.database.db, { now, scope: null, source: 'all', sinceMs: 30 * DAY })).toHaveLength(5);

    const hourly = await holdReleaseHistogram(t.database.db, { now, scope: null, rangeMs: 24 * HOUR });
    expect(hourly).toHaveLength(25);
    expect(hourly.at(-1)).toEqual({ at: new Date('2026-06-01T12:00:00Z'), expirationJob: 1, manual: 1 });
    expect(hourly.find((b) => b.at.getTime() === new Date('2026-06-01T07:00:00Z').getTime())).toMatchObject({ expirationJob: 1, manual: 0 });
    expect(hourly.reduce((s, b) => s + b.expirationJob, 0)).toBe(2);
    const daily = await holdReleaseHistogram(t.database.db, { now, scope: null, rangeMs: 7 * DAY });
    expect(daily.reduce((s, b) => s + b.expirationJob + b.manual, 0)).toBe(4);
  });
});

describe('outboxes', () => {
  it('pending count, oldest pending age, publish rate over 5 min and failing rows per outbox', async () => {
    const now = new Date('2026-06-01T12:00:00Z');
    await insertOutboxRow(t.database, 'crm', { createdAt: new Date(now.getTime() - 90_000) });
    await insertOutboxRow(t.database, 'crm', { createdAt: new Date(now.getTime() - 30_000) });
    const failing = await insertOutboxRow(t.database, 'crm', { createdAt: new Date(now.getTime() - 60_000), attempts: 3, lastError: 'KafkaJSNumberOfRetriesExceeded' });
    for (let i = 0; i < 10; i++) await insertOutboxRow(t.database, 'crm', { createdAt: new Date(now.getTime() - 5 * MIN), publishedAt: new Date(now.getTime() - MIN) });
    await insertOutboxRow(t.database, 'crm', { createdAt: new Date(now.getTime() - HOUR), publishedAt: new Date(now.getTime() - 6 * MIN) });
    await insertOutboxRow(t.database, 'chessboard', { createdAt: new Date(now.getTime() - HOUR), publishedAt: new Date(now.getTime() - 4 * MIN) });

    const stats = await getOutboxStats(t.database.db, { now });
    expect(stats).toEqual([
      { outbox: 'crm', pending: 3, oldestPendingAt: new Date(now.getTime() - 90_000), oldestPendingAgeMs: 90_000, publishedLast5Min: 10, publishRatePerMin: 2, failing: 1 },
      { outbox: 'chessboard', pending: 0, oldestPendingAt: null, oldestPendingAgeMs: null, publishedLast5Min: 1, publishRatePerMin: 0.2, failing: 0 },
    ]);
    const rows = await listFailingOutboxRows(t.database.db, { outbox: 'crm' });
    expect(rows).toEqual([expect.objectContaining({ messageId: failing, attempts: 3, lastError: 'KafkaJSNumberOfRetriesExceeded' })]);
  });
});

describe('overview', () => {
  it('shows every tile with the alerts that apply, and samples the figures at most once a minute for the sparklines', async () => {
    const now = new Date();
    const a = await insertWorld(t.database, 'A');
    await seedHolds(a, now);
    const obj = await insertObject(t.database, a, { status: 'Free' });
    await insertHoldRelease(t.database, a, { propertyObjectId: obj.id, releasedAt: new Date(now.getTime() - 20 * MIN) });
    await t.database.sql`INSERT INTO chessboard.outbox (message_id, topic, key, aggregate_type, aggregate_id, payload, created_at)
      SELECT gen_random_uuid(), 'pin.chessboard.property-object-upserted.v1', 'k', 'Test', gen_random_uuid(), '{}'::jsonb, now() - interval '2 minutes'
      FROM generate_series(1, 1001)`;
    await insertProjectCard(t.database, { status: 'Delisted', updatedAt: new Date(now.getTime() - 40 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(now.getTime() - 31 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(now.getTime() - 2 * DAY_MS) });
    await insertJobRun(t.database, { job: 'booking-expiration', startedAt: new Date(now.getTime() - MIN), status: 'failed', error: 'Error: boom' });
    await insertJobRun(t.database, { job: 'delisted-retention', startedAt: new Date(now.getTime() - 30 * HOUR), summary: { DeletedPropertyObjectCards: 3 } });
    await t.database.sql`INSERT INTO ops.job_controls (job, paused, changed_by) VALUES ('project-aggregates-recalc', true, 'someone')`;

    const o = await opsCaller(t, actorOf('ops')).overview();
    expect(o.tenantScope).toBeNull();
    expect(o.stuckHolds).toMatchObject({ inGrace: 2, pastGrace: 3 });
    expect(o.lostReleases).toEqual({ lastHour: 1, lastDay: 1, lastWeek: 1 });
    expect(o.outboxes.find((x) => x.outbox === 'chessboard')).toMatchObject({ pending: 1001 });
    expect(o.delisted.propertyObjects).toMatchObject({ all: 2, pastCutoff: 1 });
    expect(o.delisted.projects).toMatchObject({ all: 1, pastCutoff: 1 });
    expect(o.kafkaError).toBeNull();
    expect(o.consumers!.map((c) => c.group).sort()).toEqual(['catalog.card-projection', 'chessboard.crm-property-object-status', 'crm.property-object-projection', 'messenger.deal-chat', 'notifications.booking-events', 'rewards.booking-events']);
    expect(o.dlq!.every((d) => d.size === 0)).toBe(true);
    expect(o.jobs.map((j) => j.name)).toContain('reconciliation');
    expect(o.jobs.find((j) => j.name === 'booking-expiration')!.lastRun).toMatchObject({ status: 'failed', error: 'Error: boom', durationMs: 100 });
    expect(o.jobs.find((j) => j.name === 'project-aggregates-recalc')!.paused).toBe(true);

    const codes = o.alerts.map((x) => `${x.code}${x.subject ? `:${x.subject}` : ''}`);
    expect(codes).toEqual(expect.arrayContaining([
      'HOLDS_PAST_GRACE', 'LOST_RELEASES', 'OUTBOX_BACKLOG:chessboard', 'RETENTION_NOT_RUN:delisted-retention',
      'JOB_FAILED:booking-expiration', 'JOB_PAUSED:project-aggregates-recalc',
    ]));
    expect(codes).not.toContain('OUTBOX_BACKLOG:crm');
    expect(codes).not.toContain('DLQ_NOT_EMPTY:catalog.card-projection');
    expect(o.alerts.find((x) => x.code === 'RETENTION_NOT_RUN')!.values.hours).toBe(30);
    expect(o.alerts[0]!.severity).toBe('critical');

    // the read sampled every figure once; a second read within the minute adds nothing
    expect(o.trends[SERIES.holdsPastGrace]).toEqual([{ at: expect.any(Date), value: 3 }]);
    expect(o.trends[SERIES.outboxPending('chessboard')]!.at(-1)!.value).toBe(1001);
    await opsCaller(t, actorOf('ops')).overview();
    const [{ n }] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ops.metric_samples WHERE name = ${SERIES.holdsPastGrace}`;
    expect(n).toBe(1);
  });

  it('a retention that never ran alerts only once the installation has had its nightly window (its first job run > 26 h ago)', async () => {
    const now = new Date();
    const retentionAlert = async () => (await opsCaller(t, actorOf('ops')).overview()).alerts.filter((x) => x.code === 'RETENTION_NOT_RUN');
    expect(await retentionAlert()).toEqual([]);
    await insertJobRun(t.database, { job: 'outbox-relay', startedAt: new Date(now.getTime() - HOUR) });
    expect(await retentionAlert()).toEqual([]);
    await insertJobRun(t.database, { job: 'booking-expiration', startedAt: new Date(now.getTime() - 27 * HOUR) });
    expect(await retentionAlert()).toMatchObject([{ subject: 'delisted-retention', values: { hours: -1 } }]);
  });

  it('a tenant-scoped viewer sees its tenant\'s holds and releases, no cross-tenant history, and records no samples', async () => {
    const now = new Date();
    const a = await insertWorld(t.database, 'A');
    const b = await insertWorld(t.database, 'B');
    await seedHolds(a, now);
    await insertObject(t.database, b, { status: 'Reserved', timer: new Date(now.getTime() - HOUR) });
    const o = await opsCaller(t, actorOf('viewer', b.tenantId)).overview();
    expect(o.tenantScope).toBe(b.tenantId);
    expect(o.stuckHolds).toMatchObject({ inGrace: 0, pastGrace: 1 });
    expect(o.trends[SERIES.holdsPastGrace]).toBeUndefined();
    const [{ n }] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ops.metric_samples`;
    expect(n).toBe(0);
    const list = await opsCaller(t, actorOf('viewer', b.tenantId)).stuckHolds();
    expect(list.rows).toHaveLength(1);
  });

  it('sparkline history: samples once per minute, read back oldest first', async () => {
    const t0 = new Date('2026-06-01T00:00:00Z');
    const deps = { database: t.database, env: t.env };
    for (let i = 0; i < 5; i++) await getOverview(deps, { now: new Date(t0.getTime() + i * 30_000), scope: null });
    const trends = await readTrends(t.database.db, [SERIES.holdsPastGrace], new Date(t0.getTime() - 1), 60);
    // t0, t0+60 s, t0+120 s (the 30 s reads in between found a younger sample)
    expect(trends[SERIES.holdsPastGrace]!.map((p) => p.at.getTime() - t0.getTime())).toEqual([0, 60_000, 120_000]);
  });
});

describe('manual release of a stuck hold', () => {
  it('ops releases a held object through the chessboard command: Free, status_source Manual, event, history, hold_releases and audit with the reason', async () => {
    const a = await insertWorld(t.database, 'A');
    const obj = await insertObject(t.database, a, { status: 'Reserved', timer: new Date(Date.now() - HOUR) });
    const ops = actorOf('ops');
    const res = await opsCaller(t, ops).releaseHold({ propertyObjectId: obj.id, reason: 'runbook: lost release, crm expired the booking' });
    expect(res).toMatchObject({ propertyObjectId: obj.id, fromStatus: 'Reserved', toStatus: 'Free' });
    const [row] = await t.database.sql`SELECT status, status_source, hold_deal_id FROM chessboard.property_objects WHERE id = ${obj.id}`;
    expect(row).toEqual({ status: 'Free', status_source: 'Manual', hold_deal_id: null });
    const [release] = await t.database.sql`SELECT status_source, actor_id, reason FROM chessboard.hold_releases WHERE property_object_id = ${obj.id}`;
    expect(release).toEqual({ status_source: 'Manual', actor_id: ops.userId, reason: 'runbook: lost release, crm expired the booking' });
    const [event] = await t.database.sql`SELECT payload FROM chessboard.outbox WHERE aggregate_id = ${obj.id} AND topic = 'pin.chessboard.property-object-status-changed.v1'`;
    expect((event!.payload as { payload: { statusSource: string; toStatus: string } }).payload).toMatchObject({ statusSource: 'Manual', toStatus: 'Free' });
    const audit = await auditRows(t.database, 'chessboard.release-hold');
    expect(audit).toEqual([expect.objectContaining({ actor_id: ops.userId, target_id: obj.id, reason: 'runbook: lost release, crm expired the booking' })]);

    // the lost-release view lists it under Manual, not as a lost CRM release
    const releases = await opsCaller(t, ops).holdReleases({ source: 'Manual', rangeHours: 1 });
    expect(releases.rows.map((r) => r.propertyObjectId)).toEqual([obj.id]);
  });

  it('is refused with CHESSBOARD_PROPERTY_OBJECT_NOT_HELD when the object is no longer held, and needs a reason', async () => {
    const a = await insertWorld(t.database, 'A');
    const obj = await insertObject(t.database, a, { status: 'Free' });
    const err = await errorOf(opsCaller(t, actorOf('ops')).releaseHold({ propertyObjectId: obj.id, reason: 'stuck' }));
    expect(err.code).toBe('PRECONDITION_FAILED');
    expect(err.cause?.code).toBe('CHESSBOARD_PROPERTY_OBJECT_NOT_HELD');
    expect(await auditRows(t.database, 'chessboard.release-hold')).toEqual([]);
    const held = await insertObject(t.database, a, { status: 'Booked', timer: new Date(Date.now() - HOUR) });
    expect((await errorOf(opsCaller(t, actorOf('ops')).releaseHold({ propertyObjectId: held.id, reason: '   ' }))).code).toBe('BAD_REQUEST');
  });
});

describe('authorization', () => {
  const reads = (c: ReturnType<typeof opsCaller>) => [
    () => c.overview(), () => c.stuckHolds(), () => c.holdReleases(), () => c.jobs(), () => c.jobRuns({ job: 'outbox-relay' }),
    () => c.messaging(), () => c.dlqMessages(), () => c.catalog(), () => c.reconciliation(),
  ];
  const actions = (c: ReturnType<typeof opsCaller>) => [
    () => c.releaseHold({ propertyObjectId: randomUUID(), reason: 'x' }),
    () => c.runJobNow({ job: 'project-aggregates-recalc' }),
    () => c.pauseJob({ job: 'booking-expiration', reason: 'x' }),
    () => c.resumeJob({ job: 'booking-expiration' }),
    () => c.requeueDlq({ topic: 'x.dlq', partition: 0, offset: 0, reason: 'x' }),
    () => c.discardDlq({ topic: 'x.dlq', partition: 0, offset: 0, reason: 'x' }),
    () => c.repairReconciliation({ action: 'republish', bookingId: randomUUID(), reason: 'x' }),
    () => c.repairReconciliation({ action: 'manual_release', propertyObjectId: randomUUID(), reason: 'x' }),
    () => c.repairDivergence({ action: 'rehold', bookingId: randomUUID(), reason: 'x' }),
    () => c.repairDivergence({ action: 'cancel_booking', bookingId: randomUUID(), reason: 'x' }),
  ];

  it('viewer and PIN manager read every page; their actions answer FORBIDDEN and change nothing', async () => {
    for (const role of ['viewer', 'pin_manager'] as const) {
      const c = opsCaller(t, actorOf(role));
      for (const read of reads(c)) await read();
      for (const act of actions(c)) expect((await errorOf(act())).code).toBe('FORBIDDEN');
    }
    const [{ n }] = await t.database.sql<{ n: number }[]>`SELECT (SELECT count(*) FROM ops.audit_log) + (SELECT count(*) FROM ops.job_controls) + (SELECT count(*) FROM ops.job_runs) AS n`;
    expect(Number(n)).toBe(0);
  });

  it('agent and developer manager get FORBIDDEN on every ops read and action; without a session UNAUTHORIZED', async () => {
    for (const role of ['agent', 'developer_manager'] as const) {
      const c = opsCaller(t, actorOf(role));
      for (const call of [...reads(c), ...actions(c)]) expect((await errorOf(call())).code).toBe('FORBIDDEN');
    }
    expect((await errorOf(opsCaller(t, null).overview())).code).toBe('UNAUTHORIZED');
  });
});
