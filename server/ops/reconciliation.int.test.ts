import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handleCrmPropertyObjectStatus } from '../chessboard/crm-property-object-status.consumer';
import { contracts, type AnyEnvelope, type Topic } from '../contracts';
import { createJobs } from '../main/jobs';
import { runJobCycle } from '../platform/jobs/run-log';
import { createKafka } from '../platform/kafka/client';
import { registry } from '../platform/metrics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { closeOpsKafka } from './dashboard/kafka-admin';
import { actorOf, auditRows, DAY, errorOf, HOUR, insertBooking, insertObject, insertOutboxRow, insertWorld, MIN, opsCaller, type World } from '../../test/fixtures/ops-dashboard.fixtures';
import { reconciliationJob, RECONCILIATION_SCHEDULE } from './reconciliation.job';
import { runReconciliation } from './reconciliation';

let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await closeOpsKafka(); await t?.close(); });
beforeEach(async () => {
  await t.database.sql`TRUNCATE chessboard.property_objects, chessboard.crm_booking_versions, chessboard.hold_releases, chessboard.hold_mismatches,
    chessboard.outbox, chessboard.property_object_status_history, crm.outbox, crm.bookings, crm.booking_timeline, ops.job_runs, ops.audit_log,
    ops.dlq_messages, ops.metric_samples, ops.reconciliation_findings, ops.reconciliation_state CASCADE`;
});

const now = () => new Date();

/** One of each mismatch, plus rows that agree (within the tolerance) or are too fresh to judge. */
async function seedWorld(w: World) {
  const t0 = Date.now();
  // 1. booking_not_held: crm reserved the object, chessboard never heard of it
  const freeObj = await insertObject(t.database, w, { status: 'Free' });
  const notHeld = await insertBooking(t.database, w, { propertyObjectId: freeObj.id, status: 'Reserved', reserveExpiresAt: new Date(t0 + HOUR), version: 1 });
  // 2. hold_without_booking: crm expired the reserve, the release never arrived
  const dealA = randomUUID();
  const stuck = await insertObject(t.database, w, { status: 'Reserved', timer: new Date(t0 - 30 * MIN), holdDealId: dealA });
  const expired = await insertBooking(t.database, w, { propertyObjectId: stuck.id, dealId: dealA, status: 'ReserveExpired', reserveExpiresAt: new Date(t0 - 30 * MIN), version: 2 });
  // 3. timer_mismatch: booked in both, but chessboard's booked_until is 5 s off (a lost extend)
  const dealB = randomUUID();
  const crmUntil = new Date(t0 + 2 * DAY);
  const booked = await insertObject(t.database, w, { status: 'Booked', timer: new Date(crmUntil.getTime() - 5_000), holdDealId: dealB });
  const extended = await insertBooking(t.database, w, { propertyObjectId: booked.id, dealId: dealB, status: 'Booked', bookingExpiresAt: crmUntil, version: 3 });
  // agreeing within the 1 s tolerance: not reported
  const dealC = randomUUID();
  const okUntil = new Date(t0 + 3 * HOUR);
  const ok = await insertObject(t.database, w, { status: 'Reserved', timer: new Date(okUntil.getTime() + 400), holdDealId: dealC });
  await insertBooking(t.database, w, { propertyObjectId: ok.id, dealId: dealC, status: 'Reserved', reserveExpiresAt: okUntil });
  // too fresh (inside the settle window): the event may still be in flight
  const fresh = await insertObject(t.database, w, { status: 'Free' });
  await insertBooking(t.database, w, { propertyObjectId: fresh.id, status: 'Reserved', updatedAt: new Date(t0 - 10_000) });
  // a hold with no crm booking at all (e.g. an import): only a manual release can fix it
  const orphan = await insertObject(t.database, w, { status: 'Booked', timer: new Date(t0 + DAY) });
  return { freeObj, notHeld, stuck, expired, booked, extended, crmUntil, orphan };
}

describe('reconciliation report', () => {
  it('lists active bookings not held, holds without an active booking and differing timers, each with its cause and repairs', async () => {
    const w = await insertWorld(t.database, 'A');
    const s = await seedWorld(w);
    const report = await runReconciliation(t.database.db, { now: now(), scope: null, consumerLag: 0 });
    expect(report.counts).toEqual({ booking_not_held: 1, hold_without_booking: 2, timer_mismatch: 1 });
    expect(report.total).toBe(4);

    expect(report.rows.find((r) => r.kind === 'booking_not_held')).toMatchObject({
      propertyObjectId: s.freeObj.id, objectStatus: 'Free', bookingId: s.notHeld.id, bookingStatus: 'Reserved', bookingVersion: 1,
      cause: 'lost_event', repairs: ['republish'], tenantName: 'A',
    });
    const stuck = report.rows.find((r) => r.propertyObjectId === s.stuck.id)!;
    expect(stuck).toMatchObject({ kind: 'hold_without_booking', objectStatus: 'Reserved', holdDealId: s.stuck.holdDealId, bookingId: s.expired.id, bookingStatus: 'ReserveExpired', repairs: ['republish', 'manual_release'] });
    expect(report.rows.find((r) => r.propertyObjectId === s.orphan.id)).toMatchObject({ kind: 'hold_without_booking', bookingId: null, repairs: ['manual_release'] });
    expect(report.rows.find((r) => r.kind === 'timer_mismatch')).toMatchObject({
      propertyObjectId: s.booked.id, bookingId: s.extended.id, objectStatus: 'Booked', bookingTimer: s.crmUntil, timerDiffMs: -5_000, repairs: ['republish'],
    });

    // a tighter tolerance and a shorter settle window find more
    const strict = await runReconciliation(t.database.db, { now: now(), scope: null, toleranceMs: 100, settleMs: 1_000 });
    expect(strict.counts).toEqual({ booking_not_held: 2, hold_without_booking: 2, timer_mismatch: 2 });
    // another tenant's viewer sees none of it
    expect((await runReconciliation(t.database.db, { now: now(), scope: randomUUID() })).total).toBe(0);
  });

  it('explains the cause: a DLQ record of the booking, its event still in the crm outbox, consumer lag, otherwise a lost event', async () => {
    const w = await insertWorld(t.database, 'A');
    const s = await seedWorld(w);
    await t.database.sql`INSERT INTO ops.dlq_messages (topic, partition, "offset", consumer_group, error_code, aggregate_id, tenant_id)
      VALUES ('x.dlq', 0, 1, 'chessboard.crm-property-object-status', 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH', ${s.expired.id}, ${w.tenantId})`;
    await insertOutboxRow(t.database, 'crm', { createdAt: new Date(Date.now() - 3 * MIN), publishedAt: null, aggregateId: s.notHeld.id });
    const report = await runReconciliation(t.database.db, { now: now(), scope: null, consumerLag: 12 });
    const cause = (id: string) => report.rows.find((r) => r.propertyObjectId === id)!.cause;
    expect(cause(s.stuck.id)).toBe('dlq');
    expect(cause(s.freeObj.id)).toBe('outbox_pending');
    expect(cause(s.booked.id)).toBe('consumer_lag');
    expect((await runReconciliation(t.database.db, { now: now(), scope: null, consumerLag: 0 })).rows.find((r) => r.propertyObjectId === s.booked.id)!.cause).toBe('lost_event');
  });
});

describe('an active booking of an object chessboard cannot hold (booked while crm\'s view lagged)', () => {
  it('Sold or deleted in chessboard: cause object_unavailable, the only repair is cancel booking (a republish would be refused again)', async () => {
    const w = await insertWorld(t.database, 'A');
    const sold = await insertObject(t.database, w, { status: 'Sold' });
    const onSold = await insertBooking(t.database, w, { propertyObjectId: sold.id, status: 'Reserved', reserveExpiresAt: new Date(Date.now() + HOUR) });
    const onDeleted = await insertBooking(t.database, w, { propertyObjectId: randomUUID(), status: 'Booked', bookingExpiresAt: new Date(Date.now() + DAY) });
    const report = await runReconciliation(t.database.db, { now: now(), scope: null, consumerLag: 0 });
    expect(report.rows.find((r) => r.bookingId === onSold.id)).toMatchObject({ kind: 'booking_not_held', objectStatus: 'Sold', cause: 'object_unavailable', repairs: ['cancel_booking'] });
    expect(report.rows.find((r) => r.bookingId === onDeleted.id)).toMatchObject({ kind: 'booking_not_held', objectStatus: null, cause: 'object_unavailable', repairs: ['cancel_booking'] });
  });
});

describe('one count for the overview and the reconciliation page', () => {
  it('both read the findings the job keeps: nothing before its first cycle, then the overview counts what the page lists; tenant-scoped too', async () => {
    const w = await insertWorld(t.database, 'A');
    await seedWorld(w);
    const c = opsCaller(t, actorOf('ops'));
    expect((await c.overview()).reconciliation).toBeNull();
    expect(await c.reconciliation()).toMatchObject({ asOf: null, total: 0, rows: [] });

    const cycle = await runJobCycle(reconciliationJob, { database: t.database, env: t.env, logger: t.logger, kafka: createKafka(t.env), signal: new AbortController().signal }, 'manual');
    const [overview, page] = [await c.overview(), await c.reconciliation()];
    expect(page.total).toBe(4);
    expect(page.asOf).toBeInstanceOf(Date);
    expect(overview.reconciliation).toMatchObject({ total: page.total, byKind: page.counts, at: page.asOf });
    expect(cycle.summary).toMatchObject({ Total: page.total });
    expect(overview.alerts.map((a) => a.code)).toContain('RECONCILIATION_MISMATCHES');
    // a viewer of the tenant and one of another tenant each see their own figure on both screens
    const own = opsCaller(t, actorOf('viewer', w.tenantId));
    expect((await own.overview()).reconciliation?.total).toBe((await own.reconciliation()).total);
    const other = opsCaller(t, actorOf('viewer', randomUUID()));
    expect((await other.overview()).reconciliation?.total).toBe(0);
    expect((await other.reconciliation()).total).toBe(0);
  });
});

describe('reconciliation repairs', () => {
  /** What the relay would publish: the crm outbox row's envelope, applied by the chessboard consumer. */
  async function deliver(messageId: string) {
    const [row] = await t.database.sql<{ topic: string; payload: AnyEnvelope }[]>`SELECT topic, payload FROM crm.outbox WHERE message_id = ${messageId}`;
    const envelope = contracts[row!.topic as Topic].parse(row!.payload) as AnyEnvelope;
    return t.database.db.transaction((tx) => handleCrmPropertyObjectStatus(tx, { topic: row!.topic as Topic, envelope, partition: 0, offset: '0' }, { logger: t.logger }));
  }

  it('republish writes a crm outbox row repeating the booking\'s current-state event with its bookingVersion; applied, it fixes the chessboard', async () => {
    const w = await insertWorld(t.database, 'A');
    const s = await seedWorld(w);
    const ops = actorOf('ops');
    const c = opsCaller(t, ops);

    const released = await c.repairReconciliation({ action: 'republish', bookingId: s.expired.id, reason: 'lost booking-expired' });
    expect(released).toMatchObject({ action: 'republish', bookingId: s.expired.id, topic: 'pin.crm.booking-expired.v1', bookingVersion: 2 });
    const [row] = await t.database.sql<{ payload: AnyEnvelope & { payload: Record<string, unknown> }; published_at: Date | null }[]>`
      SELECT payload, published_at FROM crm.outbox WHERE message_id = ${released.messageId}`;
    expect(row!.published_at).toBeNull();
    expect(row!.payload).toMatchObject({ aggregateId: s.expired.id, tenantId: w.tenantId, payload: { bookingId: s.expired.id, bookingVersion: 2, phase: 'Reserve', status: 'ReserveExpired', propertyObjectId: s.stuck.id } });
    expect(await deliver(released.messageId)).toMatchObject({ result: 'applied' });

    const created = await c.repairReconciliation({ action: 'republish', bookingId: s.notHeld.id, reason: 'lost booking-created' });
    expect(created).toMatchObject({ topic: 'pin.crm.booking-created.v1', bookingVersion: 1 });
    expect(await deliver(created.messageId)).toMatchObject({ result: 'applied' });

    const confirmed = await c.repairReconciliation({ action: 'republish', bookingId: s.extended.id, reason: 'lost booking-extended' });
    expect(confirmed).toMatchObject({ topic: 'pin.crm.booking-confirmed.v1', bookingVersion: 3 });
    expect(await deliver(confirmed.messageId)).toMatchObject({ result: 'applied' });
    // consumers dedupe by version: repeating it again changes nothing
    const twice = await c.repairReconciliation({ action: 'republish', bookingId: s.extended.id, reason: 'again' });
    expect(await deliver(twice.messageId)).toMatchObject({ result: 'no-op' });

    const report = await runReconciliation(t.database.db, { now: now(), scope: null, settleMs: 0 });
    expect(report.rows.map((r) => r.propertyObjectId).filter((id) => [s.stuck.id, s.freeObj.id, s.booked.id].includes(id))).toEqual([]);
    expect(await auditRows(t.database, 'ops.reconciliation.republish')).toHaveLength(4);
    expect((await auditRows(t.database, 'ops.reconciliation.republish'))[0]).toMatchObject({ actor_id: ops.userId, target_type: 'Booking', target_id: s.expired.id, reason: 'lost booking-expired' });
  });

  it('manual release goes through the chessboard command (audit with the reason); refused when the object is no longer held', async () => {
    const w = await insertWorld(t.database, 'A');
    const s = await seedWorld(w);
    const c = opsCaller(t, actorOf('ops'));
    const res = await c.repairReconciliation({ action: 'manual_release', propertyObjectId: s.orphan.id, reason: 'imported hold, no booking in crm' });
    expect(res).toMatchObject({ action: 'manual_release', propertyObjectId: s.orphan.id, toStatus: 'Free' });
    expect(await auditRows(t.database, 'chessboard.release-hold')).toEqual([expect.objectContaining({ target_id: s.orphan.id, reason: 'imported hold, no booking in crm' })]);
    const err = await errorOf(c.repairReconciliation({ action: 'manual_release', propertyObjectId: s.orphan.id, reason: 'again' }));
    expect(err.cause?.code).toBe('CHESSBOARD_PROPERTY_OBJECT_NOT_HELD');
    expect((await errorOf(c.repairReconciliation({ action: 'republish', bookingId: randomUUID(), reason: 'x' }))).code).toBe('NOT_FOUND');
  });
});

describe('reconciliation job', () => {
  it('is registered as `reconciliation` every 5 min; a cycle sets pin_reconciliation_mismatches{kind}, records the counts and samples the overview', async () => {
    expect(createJobs().reconciliation).toBe(reconciliationJob);
    expect(reconciliationJob.schedule(t.env)).toEqual(RECONCILIATION_SCHEDULE);
    expect(RECONCILIATION_SCHEDULE).toEqual({ cron: '0 */5 * * * *', timezone: 'UTC' });
    const w = await insertWorld(t.database, 'A');
    await seedWorld(w);
    const logsBefore = t.logLines().length;
    const result = await runJobCycle(reconciliationJob, { database: t.database, env: t.env, logger: t.logger, kafka: createKafka(t.env), signal: new AbortController().signal }, 'manual');
    expect(result.status).toBe('succeeded');
    expect(result.summary).toMatchObject({ BookingNotHeld: 1, HoldWithoutBooking: 2, TimerMismatch: 1, Total: 4, KafkaError: null, Sampled: true, Mode: 'full', Pending: 0 });
    const metric = await registry.getSingleMetric('pin_reconciliation_mismatches')!.get();
    const byKind = Object.fromEntries(metric.values.map((v) => [v.labels.kind, v.value]));
    expect(byKind).toEqual({ booking_not_held: 1, hold_without_booking: 2, timer_mismatch: 1 });
    const [{ value }] = await t.database.sql<{ value: number }[]>`SELECT value FROM ops.metric_samples WHERE name = 'reconciliation.mismatches'`;
    expect(value).toBe(4);
    expect(t.logLines().slice(logsBefore).filter((l) => l.msg === 'reconciliation mismatch')).toHaveLength(4);
    // the overview shows the last run's figure and flags it
    const o = await opsCaller(t, actorOf('ops')).overview();
    expect(o.reconciliation).toMatchObject({ total: 4, byKind: { booking_not_held: 1, hold_without_booking: 2, timer_mismatch: 1 } });
    expect(o.alerts.map((a) => a.code)).toContain('RECONCILIATION_MISMATCHES');
  });
});
