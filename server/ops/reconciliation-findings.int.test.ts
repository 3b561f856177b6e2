import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handleCrmPropertyObjectStatus } from '../chessboard/crm-property-object-status.consumer';
import { contracts, type AnyEnvelope, type Topic } from '../contracts';
import { recordAudit } from '../platform/audit';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { closeOpsKafka } from './dashboard/kafka-admin';
import { actorOf, DAY, HOUR, insertBooking, insertObject, insertWorld, MIN, opsCaller, type World } from '../../test/fixtures/ops-dashboard.fixtures';
import { DIVERGENCE_AUDIT_ACTION, runReconciliation, type ReconciliationRow } from './reconciliation';
import { readFindings, runReconciliationCycle } from './reconciliation-findings';

/**
 * The maintained findings (ops.reconciliation_findings) against the full comparison (runReconciliation) at the
 * same instant: every cycle here is given its `now`, so settle windows and watermarks are exact, not timed.
 */

let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await closeOpsKafka(); await t?.close(); });
beforeEach(async () => {
  await t.database.sql`TRUNCATE chessboard.property_objects, chessboard.crm_booking_versions, chessboard.hold_releases, chessboard.hold_mismatches,
    chessboard.outbox, chessboard.property_object_status_history, crm.outbox, crm.bookings, crm.booking_timeline, ops.job_runs, ops.audit_log,
    ops.dlq_messages, ops.metric_samples, ops.reconciliation_findings, ops.reconciliation_state CASCADE`;
});

const cycle = (now: Date, opts: { full?: boolean } = {}) =>
  t.database.db.transaction((tx) => runReconciliationCycle(tx, { now, runId: randomUUID(), consumerLag: 0, ...opts }));
const maintained = async () => (await readFindings(t.database.db, { scope: null })).rows;
const recomputed = async (now: Date) => (await runReconciliation(t.database.db, { now, scope: null, consumerLag: 0 })).rows;
/** the rows as the page shows them, in a stable order */
const shown = (rows: ReconciliationRow[]) =>
  [...rows].sort((a, b) => `${a.kind}:${a.propertyObjectId}:${a.bookingId}`.localeCompare(`${b.kind}:${b.propertyObjectId}:${b.bookingId}`));

/** Every kind of finding and every cause the database alone explains, beside rows that agree or are still settling. */
async function seedEveryKind(w: World, t0: number) {
  const freeObj = await insertObject(t.database, w, { status: 'Free' });
  const notHeld = await insertBooking(t.database, w, { propertyObjectId: freeObj.id, status: 'Reserved', reserveExpiresAt: new Date(t0 + HOUR), version: 1 });
  const dealA = randomUUID();
  const stuck = await insertObject(t.database, w, { status: 'Reserved', timer: new Date(t0 - 30 * MIN), holdDealId: dealA });
  await insertBooking(t.database, w, { propertyObjectId: stuck.id, dealId: dealA, status: 'ReserveExpired', reserveExpiresAt: new Date(t0 - 30 * MIN), version: 2 });
  const orphan = await insertObject(t.database, w, { status: 'Booked', timer: new Date(t0 + DAY) });
  const dealB = randomUUID();
  const crmUntil = new Date(t0 + 2 * DAY);
  const booked = await insertObject(t.database, w, { status: 'Booked', timer: new Date(crmUntil.getTime() - 5_000), holdDealId: dealB });
  const extended = await insertBooking(t.database, w, { propertyObjectId: booked.id, dealId: dealB, status: 'Booked', bookingExpiresAt: crmUntil, version: 3 });
  // object_unavailable: an active booking of a Sold object and of one chessboard does not have
  const sold = await insertObject(t.database, w, { status: 'Sold' });
  await insertBooking(t.database, w, { propertyObjectId: sold.id, status: 'Reserved', reserveExpiresAt: new Date(t0 + HOUR) });
  await insertBooking(t.database, w, { propertyObjectId: randomUUID(), status: 'Booked', bookingExpiresAt: new Date(t0 + DAY) });
  // released in chessboard (tombstone), once by an operator's choice (audited) and once by the chessboard alone
  for (const deliberate of [true, false]) {
    const obj = await insertObject(t.database, w, { status: 'Free' });
    const b = await insertBooking(t.database, w, { propertyObjectId: obj.id, status: 'Reserved', reserveExpiresAt: new Date(t0 + HOUR) });
    await t.database.sql`INSERT INTO chessboard.crm_booking_versions (booking_id, property_object_id, deal_id, applied_version, released)
      VALUES (${b.id}, ${obj.id}, ${b.dealId}, ${b.version}, true)`;
    if (deliberate) {
      await recordAudit(t.database.db, { actor: actorOf('ops'), action: DIVERGENCE_AUDIT_ACTION, targetType: 'Booking', targetId: b.id, reason: 'kept', at: new Date(t0 - HOUR) });
    }
  }
  // agreeing within the tolerance, and one too fresh to judge (10 s old)
  const dealC = randomUUID();
  const okUntil = new Date(t0 + 3 * HOUR);
  const ok = await insertObject(t.database, w, { status: 'Reserved', timer: new Date(okUntil.getTime() + 400), holdDealId: dealC });
  await insertBooking(t.database, w, { propertyObjectId: ok.id, dealId: dealC, status: 'Reserved', reserveExpiresAt: okUntil });
  const fresh = await insertObject(t.database, w, { status: 'Free' });
  const freshBooking = await insertBooking(t.database, w, { propertyObjectId: fresh.id, status: 'Reserved', updatedAt: new Date(t0 - 10_000) });
  return { freeObj, notHeld, stuck, orphan, booked, extended, fresh, freshBooking };
}

/** What the relay would publish of a crm outbox row, applied by the chessboard consumer. */
async function deliver(messageId: string) {
  const [row] = await t.database.sql<{ topic: string; payload: AnyEnvelope }[]>`SELECT topic, payload FROM crm.outbox WHERE message_id = ${messageId}`;
  const envelope = contracts[row!.topic as Topic].parse(row!.payload) as AnyEnvelope;
  return t.database.db.transaction((tx) => handleCrmPropertyObjectStatus(tx, { topic: row!.topic as Topic, envelope, partition: 0, offset: '0' }, { logger: t.logger }));
}

describe('maintained findings = the full comparison', () => {
  it('the first (full) cycle and a later incremental one each leave exactly the rows the full comparison finds at that instant, with causes and repairs', async () => {
    const w = await insertWorld(t.database, 'A');
    const t0 = Date.now();
    const s = await seedEveryKind(w, t0);

    const first = await cycle(new Date(t0));
    expect(first.mode).toBe('full');
    const expected = await recomputed(new Date(t0));
    expect(new Set(expected.map((r) => r.kind))).toEqual(new Set(['booking_not_held', 'hold_without_booking', 'timer_mismatch']));
    expect(new Set(expected.map((r) => r.cause))).toEqual(new Set(['lost_event', 'object_unavailable', 'deliberate_divergence', 'released_in_chessboard']));
    expect(shown(await maintained())).toEqual(shown(expected));
    expect(first.total).toBe(expected.length);

    // five minutes on: the fresh booking has settled (a new finding), the lost extend was applied a minute after
    // the first cycle (its finding goes), and nothing else changed
    await t.database.sql`UPDATE chessboard.property_objects SET booked_until = ${new Date(t0 + 2 * DAY).toISOString()}::timestamptz,
      updated_at = ${new Date(t0 + MIN).toISOString()}::timestamptz WHERE id = ${s.booked.id}`;
    const t1 = new Date(t0 + 5 * MIN);
    const second = await cycle(t1);
    expect(second.mode).toBe('incremental');
    const expected1 = await recomputed(t1);
    expect(shown(await maintained())).toEqual(shown(expected1));
    expect(expected1.some((r) => r.bookingId === s.freshBooking.id)).toBe(true);
    expect(expected1.some((r) => r.propertyObjectId === s.booked.id)).toBe(false);
    // it compared the six bookings of its findings and the one changed since, not the eighth (agreeing, unchanged)
    expect(second.comparedBookings).toBe(7);
  });
});

describe('incremental cycles and repairs', () => {
  it('a cycle finds a mismatch created since the last one and drops the repaired ones; a repair takes its row off the page at once', async () => {
    const w = await insertWorld(t.database, 'A');
    const t0 = Date.now();
    const s = await seedEveryKind(w, t0);
    await cycle(new Date(t0));
    const ops = opsCaller(t, actorOf('ops'));
    const listedObjects = async () => (await ops.reconciliation()).rows.map((r) => r.propertyObjectId);
    expect(await listedObjects()).toEqual(expect.arrayContaining([s.orphan.id, s.freeObj.id]));

    // repairs: the orphan hold released, the lost booking-created republished — both rows leave the page with the repair
    await ops.repairReconciliation({ action: 'manual_release', propertyObjectId: s.orphan.id, reason: 'imported hold' });
    const republished = await ops.repairReconciliation({ action: 'republish', bookingId: s.notHeld.id, reason: 'lost create' });
    expect(await listedObjects()).not.toContain(s.orphan.id);
    expect(await listedObjects()).not.toContain(s.freeObj.id);
    expect((await ops.overview()).reconciliation?.total).toBe((await ops.reconciliation()).total);

    // meanwhile crm books a Free object and the event is lost: a new mismatch, written after the last cycle's watermark
    const lost = await insertObject(t.database, w, { status: 'Free' });
    const lostBooking = await insertBooking(t.database, w, { propertyObjectId: lost.id, status: 'Reserved', updatedAt: new Date(t0 + 10_000) });
    expect(await deliver(republished.messageId)).toMatchObject({ result: 'applied' });

    const t1 = new Date(Date.now() + 3 * MIN);
    const next = await cycle(t1);
    expect(next.mode).toBe('incremental');
    const rows = await maintained();
    expect(rows.find((r) => r.bookingId === lostBooking.id)).toMatchObject({ kind: 'booking_not_held', propertyObjectId: lost.id, cause: 'lost_event' });
    expect(rows.map((r) => r.propertyObjectId)).not.toContain(s.orphan.id);
    expect(rows.map((r) => r.propertyObjectId)).not.toContain(s.freeObj.id);
    expect(shown(rows)).toEqual(shown(await recomputed(t1)));
  });

  it('a republished event that never arrives: pending until the settle window has passed, then listed again (its event still in the outbox)', async () => {
    const w = await insertWorld(t.database, 'A');
    const t0 = Date.now();
    const s = await seedEveryKind(w, t0);
    await cycle(new Date(t0));
    const ops = opsCaller(t, actorOf('ops'));
    await ops.repairReconciliation({ action: 'republish', bookingId: s.notHeld.id, reason: 'lost create' });
    const [pending] = await t.database.sql<{ pending_since: Date | null }[]>`SELECT pending_since FROM ops.reconciliation_findings WHERE subject_id = ${s.notHeld.id}`;
    expect(pending!.pending_since).not.toBeNull();

    // a cycle within the settle window of the repair keeps it off the page, a full one too
    await cycle(new Date(Date.now() + MIN));
    expect((await maintained()).map((r) => r.bookingId)).not.toContain(s.notHeld.id);
    expect((await cycle(new Date(Date.now() + MIN), { full: true })).mode).toBe('full');
    expect((await maintained()).map((r) => r.bookingId)).not.toContain(s.notHeld.id);
    // the first cycle past it judges the pair again: still not held, the republished row not yet published
    const later = new Date(Date.now() + 3 * MIN);
    await cycle(later);
    expect((await maintained()).find((r) => r.bookingId === s.notHeld.id)).toMatchObject({ kind: 'booking_not_held', cause: 'outbox_pending' });
    expect(shown(await maintained())).toEqual(shown(await recomputed(later)));
  });

  it('a cycle reads only what changed: a mismatch that left no newer updated_at waits for the full cycle (forced, or a day after the last)', async () => {
    const w = await insertWorld(t.database, 'A');
    const t0 = Date.now();
    await cycle(new Date(t0));
    // written "a day ago": older than every watermark, as a writer that forgot updated_at would leave it
    const obj = await insertObject(t.database, w, { status: 'Free' });
    const b = await insertBooking(t.database, w, { propertyObjectId: obj.id, status: 'Reserved' });
    const incremental = await cycle(new Date(t0 + 5 * MIN));
    expect(incremental).toMatchObject({ mode: 'incremental', comparedBookings: 0, total: 0 });
    const daily = await cycle(new Date(t0 + DAY + MIN));
    expect(daily.mode).toBe('full');
    expect(daily.rows).toEqual([expect.objectContaining({ kind: 'booking_not_held', bookingId: b.id })]);
  });
});

describe('the page and the overview read the maintained findings', () => {
  it('a changed, deleted or pending finding row changes both answers; nothing is compared on read', async () => {
    const w = await insertWorld(t.database, 'A');
    const t0 = Date.now();
    const s = await seedEveryKind(w, t0);
    await cycle(new Date(t0));
    const ops = opsCaller(t, actorOf('ops'));
    const before = await ops.reconciliation();
    expect((await ops.overview()).reconciliation?.total).toBe(before.total);

    await t.database.sql`UPDATE ops.reconciliation_findings SET cause = 'dlq' WHERE subject_id = ${s.extended.id}`;
    await t.database.sql`DELETE FROM ops.reconciliation_findings WHERE subject_id = ${s.orphan.id}`;
    await t.database.sql`UPDATE ops.reconciliation_findings SET pending_since = now() WHERE subject_id = ${s.notHeld.id}`;
    // a mismatch created after the cycle is not on the page until a cycle finds it
    const obj = await insertObject(t.database, w, { status: 'Free' });
    await insertBooking(t.database, w, { propertyObjectId: obj.id, status: 'Reserved' });

    const after = await ops.reconciliation();
    expect(after.total).toBe(before.total - 2);
    expect(after.rows.find((r) => r.bookingId === s.extended.id)).toMatchObject({ kind: 'timer_mismatch', cause: 'dlq' });
    expect(after.rows.map((r) => r.propertyObjectId)).not.toContain(obj.id);
    const overview = await ops.overview();
    expect(overview.reconciliation).toMatchObject({ total: after.total, byKind: after.counts });
    expect(after.counts.hold_without_booking).toBe(before.counts.hold_without_booking - 1);
  });
});
