import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobContext, readObject } from '../../test/fixtures/chessboard.fixtures';
import { createPropertyObjectHoldExpirationJob } from '../chessboard/property-object-hold-expiration.job';
import { cancelBookingCommand } from '../crm/commands/cancel-booking';
import { createBookingCommand } from '../crm/commands/create-booking';
import { extendBookingCommand } from '../crm/commands/extend-booking';
import { actor, bookingRow, callerFor, insertDeal, insertProgram, outboxOf, timelineOf } from '../../test/fixtures/crm.fixtures';
import { TOPICS } from '../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { eventually, seedChessboard, startBackbone, type Backbone, type SeededChessboard } from '../../test/harness/saga-harness';
import { closeOpsKafka } from './dashboard/kafka-admin';
import { auditRows, errorOf, opsCaller } from '../../test/fixtures/ops-dashboard.fixtures';
import { runReconciliation } from './reconciliation';
import { commandContext } from '../platform/command-context';

/**
 * Issue 15, "manual release and reconciliation that close the loop", through the REAL broker: crm
 * commands → relay → Kafka → chessboard consumer, then the repairs, then the next reconciliation check.
 * Every finding kind has a repair that, taken, makes the finding disappear on the next check.
 */

let t: TestContext;
let backbone: Backbone;
let seeded: SeededChessboard;
const TENANT = randomUUID();
const agent = actor('agent', TENANT);
const manager = actor('developer_manager', TENANT);
const ops = actor('ops', null);
let program: { id: string };
let next = 0;
const takeObject = () => seeded.objectIds[next++]!;

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  program = await insertProgram(t, TENANT, { reserveDurationMinutes: 60, bookingDurationHours: 48 });
  seeded = await seedChessboard(t, TENANT, 12);
  backbone = await startBackbone(t);
  await backbone.startConsumers();
  backbone.startRelay();
  await backbone.settled(60_000);
}, 120_000);

afterAll(async () => {
  await backbone?.close();
  await closeOpsKafka();
  await t?.close();
});

const objectRow = (id: string) => readObject(t.database, id);
/** the next reconciliation check, with no settle window (everything here has settled through Kafka) */
const check = async () => runReconciliation(t.database.db, { now: new Date(), scope: null, settleMs: 0, consumerLag: 0 });
const findingsOf = async (objectId: string) => (await check()).rows.filter((r) => r.propertyObjectId === objectId);

async function untilObject(id: string, status: string) {
  return eventually(async () => {
    const o = await objectRow(id);
    return o.status === status ? o : false;
  }, `chessboard object ${id} ${status}`);
}

/** the chessboard consumer's inbox row of one message (applied / no-op / rejected) */
async function inboxResult(messageId: string) {
  return eventually(async () => {
    const [row] = await t.database.sql<{ result: string }[]>`SELECT result FROM chessboard.inbox WHERE message_id = ${messageId}`;
    return row?.result;
  }, `chessboard inbox row of ${messageId}`);
}

/** A booking created through the router, held by chessboard through Kafka. */
async function heldBooking() {
  const objectId = takeObject();
  const deal = await insertDeal(t, TENANT);
  const booking = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: objectId, programId: program.id });
  await untilObject(objectId, 'Reserved');
  await backbone.settled();
  return { objectId, deal, booking };
}

/** A crm command whose outbox rows are deleted before the commit: its event is lost, the change is not. */
async function withLostEvent<T extends { id: string }>(run: (tx: Parameters<Parameters<typeof t.database.db.transaction>[0]>[0]) => Promise<T>): Promise<T> {
  return t.database.db.transaction(async (tx) => {
    const result = await run(tx);
    await tx.execute(sql`DELETE FROM crm.outbox WHERE aggregate_id = ${result.id} AND published_at IS NULL`);
    return result;
  });
}

describe('manual release of a hold whose crm booking is still active', () => {
  it('without a choice: refused with OPS_RELEASE_CRM_BOOKING_ACTIVE naming the booking and its deadline; nothing is written', async () => {
    const { objectId, booking } = await heldBooking();
    const before = await objectRow(objectId);
    for (const call of [
      () => callerFor(t, ops).chessboard.releaseHold({ propertyObjectId: objectId, reason: 'stuck?' }),
      () => opsCaller(t, ops).releaseHold({ propertyObjectId: objectId, reason: 'stuck?' }),
      () => opsCaller(t, ops).repairReconciliation({ action: 'manual_release', propertyObjectId: objectId, reason: 'stuck?' }),
    ]) {
      const err = await errorOf(call());
      expect(err.code).toBe('PRECONDITION_FAILED');
      expect(err.cause).toMatchObject({
        code: 'OPS_RELEASE_CRM_BOOKING_ACTIVE',
        details: { bookingId: booking.id, bookingStatus: 'Reserved', deadline: booking.reserveExpiresAt.toISOString() },
      });
    }
    expect(await objectRow(objectId)).toEqual(before);
    expect((await bookingRow(t, booking.id)).status).toBe('Reserved');
    expect(await auditRows(t.database, 'chessboard.release-hold')).toEqual([]);
    // the reason is typed by the operator: an empty one is a validation error
    expect((await errorOf(callerFor(t, ops).chessboard.releaseHold({ propertyObjectId: objectId, reason: ' ', crmBooking: 'keep_booking' }))).code).toBe('BAD_REQUEST');
  });

  it('"cancel the crm booking too": crm cancels through its command (timeline, booking-cancelled, deal back to Application); chessboard releases once; nothing to reconcile', async () => {
    const { objectId, deal, booking } = await heldBooking();
    const res = await callerFor(t, ops).chessboard.releaseHold({ propertyObjectId: objectId, reason: 'client called, gives the flat up', crmBooking: 'cancel_booking' });
    expect(res).toMatchObject({ toStatus: 'Free', crmBooking: { bookingId: booking.id, bookingStatus: 'Cancelled', choice: 'cancel_booking' } });
    expect(await bookingRow(t, booking.id)).toMatchObject({ status: 'Cancelled', closedReason: 'client called, gives the flat up', version: 2 });
    expect((await timelineOf(t, booking.id)).at(-1)).toMatchObject({ action: 'cancel', toStatus: 'Cancelled', actorId: ops.userId });
    const cancelled = (await outboxOf(t, booking.id)).find((r) => r.topic === TOPICS.bookingCancelled)!;
    expect(cancelled).toBeTruthy();
    const [d] = await t.database.sql<{ status: string }[]>`SELECT status FROM crm.deals WHERE id = ${deal.id}`;
    expect(d!.status).toBe('Application');
    // booking-cancelled went through Kafka: the consumer saw the booking already released (no second release)
    expect(await inboxResult(cancelled.messageId)).toBe('no-op');
    await backbone.settled();
    expect((await objectRow(objectId)).status).toBe('Free');
    const [{ n }] = await t.database.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM chessboard.property_object_status_history WHERE property_object_id = ${objectId} AND to_status = 'Free' AND from_status <> 'Free' AND at > ${booking.createdAt.toISOString()}::timestamptz`;
    expect(n).toBe(1);
    expect(await findingsOf(objectId)).toEqual([]);
  });

  it('"release the chessboard only": a recorded divergence; reconciliation names it (not a lost event) with re-hold / cancel; re-hold makes it disappear and later crm events apply again', async () => {
    const { objectId, booking } = await heldBooking();
    const res = await callerFor(t, ops).chessboard.releaseHold({ propertyObjectId: objectId, reason: 'developer asked to show it free', crmBooking: 'keep_booking' });
    expect(res).toMatchObject({ toStatus: 'Free', crmBooking: { bookingId: booking.id, bookingStatus: 'Reserved', choice: 'keep_booking' } });
    expect((await bookingRow(t, booking.id)).status).toBe('Reserved');
    expect(await auditRows(t.database, 'ops.release.divergence')).toEqual(expect.arrayContaining([
      expect.objectContaining({ target_id: booking.id, actor_id: ops.userId, reason: 'developer asked to show it free' }),
    ]));
    await backbone.settled();

    const [finding] = await findingsOf(objectId);
    expect(finding).toMatchObject({ kind: 'booking_not_held', bookingId: booking.id, objectStatus: 'Free', cause: 'deliberate_divergence', repairs: ['rehold', 'cancel_booking'] });
    // a chosen divergence is nothing in flight: listed at once, also within the default settle window
    const page = await opsCaller(t, ops).reconciliation();
    expect(page.rows.filter((r) => r.propertyObjectId === objectId)).toEqual([expect.objectContaining({ cause: 'deliberate_divergence' })]);
    expect((await opsCaller(t, ops).overview()).reconciliation?.total).toBe(page.total);

    const rehold = await opsCaller(t, ops).repairDivergence({ action: 'rehold', bookingId: booking.id, reason: 'crm is right' });
    expect(rehold).toMatchObject({ action: 'rehold', bookingId: booking.id, objectStatus: 'Reserved' });
    const o = await objectRow(objectId);
    expect(o).toMatchObject({ status: 'Reserved', hold_booking_id: booking.id, hold_deal_id: booking.dealId, status_source: 'Crm' });
    expect(o.reserved_until!.getTime()).toBe(booking.reserveExpiresAt.getTime());
    await backbone.settled();
    expect(await findingsOf(objectId)).toEqual([]);

    // the booking holds the object again: its confirm goes through Kafka and books it
    const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const booked = await untilObject(objectId, 'Booked');
    expect(booked.booked_until!.getTime()).toBe(confirmed.bookingExpiresAt!.getTime());
    await backbone.settled();
    expect(await findingsOf(objectId)).toEqual([]);
  });

  it('a divergence repaired by cancelling the crm booking disappears too; a repair of a booking that is no longer active is refused', async () => {
    const { objectId, booking } = await heldBooking();
    await opsCaller(t, ops).releaseHold({ propertyObjectId: objectId, reason: 'shown free by mistake', crmBooking: 'keep_booking' });
    await backbone.settled();
    expect((await findingsOf(objectId)).map((r) => r.cause)).toEqual(['deliberate_divergence']);

    const res = await opsCaller(t, ops).repairDivergence({ action: 'cancel_booking', bookingId: booking.id, reason: 'the flat is not for this client' });
    expect(res).toMatchObject({ action: 'cancel_booking', bookingId: booking.id, bookingStatus: 'Cancelled' });
    await backbone.settled();
    expect((await objectRow(objectId)).status).toBe('Free');
    expect(await findingsOf(objectId)).toEqual([]);

    const again = await errorOf(opsCaller(t, ops).repairDivergence({ action: 'rehold', bookingId: booking.id, reason: 'x' }));
    expect(again.cause?.code).toBe('OPS_REPAIR_BOOKING_NOT_ACTIVE');
    expect((await errorOf(opsCaller(t, ops).repairDivergence({ action: 'cancel_booking', bookingId: randomUUID(), reason: 'x' }))).code).toBe('NOT_FOUND');
    // a viewer may not repair
    expect((await errorOf(opsCaller(t, actor('viewer', TENANT)).repairDivergence({ action: 'rehold', bookingId: booking.id, reason: 'x' }))).code).toBe('FORBIDDEN');
  });
});

describe('lost events: republish with a new message id that chessboard applies', () => {
  it('lost booking-created (booking_not_held) → republish → the object is reserved → gone', async () => {
    const objectId = takeObject();
    const deal = await insertDeal(t, TENANT);
    const booking = await withLostEvent((tx) =>
      createBookingCommand(tx, { dealId: deal.id, propertyObjectId: objectId, programId: program.id }, commandContext(agent, randomUUID())));
    await backbone.settled();
    const [finding] = await findingsOf(objectId);
    expect(finding).toMatchObject({ kind: 'booking_not_held', bookingId: booking.id, cause: 'lost_event', repairs: ['republish'] });

    const res = await opsCaller(t, ops).repairReconciliation({ action: 'republish', bookingId: booking.id, reason: 'lost create' });
    expect(res).toMatchObject({ topic: TOPICS.bookingCreated });
    expect(await inboxResult(res.messageId)).toBe('applied');
    await backbone.settled();
    expect(await objectRow(objectId)).toMatchObject({ status: 'Reserved', hold_booking_id: booking.id });
    expect(await findingsOf(objectId)).toEqual([]);
  });

  it('lost booking-cancelled (hold_without_booking) → republish → released → gone', async () => {
    const { objectId, booking } = await heldBooking();
    await withLostEvent((tx) => cancelBookingCommand(tx, { bookingId: booking.id, reason: 'client left' }, commandContext(manager, randomUUID())));
    await backbone.settled();
    const [finding] = await findingsOf(objectId);
    expect(finding).toMatchObject({ kind: 'hold_without_booking', bookingId: booking.id, bookingStatus: 'Cancelled', cause: 'lost_event', repairs: ['republish', 'manual_release'] });

    const first = (await outboxOf(t, booking.id)).map((r) => r.messageId);
    const res = await opsCaller(t, ops).repairReconciliation({ action: 'republish', bookingId: booking.id, reason: 'lost cancel' });
    expect(first).not.toContain(res.messageId);
    expect(res).toMatchObject({ topic: TOPICS.bookingCancelled });
    expect(await inboxResult(res.messageId)).toBe('applied');
    await backbone.settled();
    expect((await objectRow(objectId)).status).toBe('Free');
    expect(await findingsOf(objectId)).toEqual([]);
  });

  it('lost booking-extended (timer_mismatch) → republish → booked_until moves → gone', async () => {
    const { objectId, booking } = await heldBooking();
    const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    await untilObject(objectId, 'Booked');
    await backbone.settled();
    const extended = await withLostEvent((tx) => extendBookingCommand(tx, { bookingId: booking.id, idempotencyKey: randomUUID() }, commandContext(manager, randomUUID())));
    expect(extended.bookingExpiresAt!.getTime()).toBeGreaterThan(confirmed.bookingExpiresAt!.getTime());
    await backbone.settled();
    const [finding] = await findingsOf(objectId);
    expect(finding).toMatchObject({ kind: 'timer_mismatch', bookingId: booking.id, cause: 'lost_event', repairs: ['republish'] });

    const res = await opsCaller(t, ops).repairReconciliation({ action: 'republish', bookingId: booking.id, reason: 'lost extend' });
    expect(await inboxResult(res.messageId)).toBe('applied');
    await backbone.settled();
    expect((await objectRow(objectId)).booked_until!.getTime()).toBe(extended.bookingExpiresAt!.getTime());
    expect(await findingsOf(objectId)).toEqual([]);
  });
});

describe('a hold freed by the hold-expiration job while crm\'s booking is active at a version chessboard applied', () => {
  /** The safety net frees the object at `asOf` (past the reserve + grace); crm's booking-expiration has not run. */
  async function freedByTheSafetyNet() {
    const { objectId, booking } = await heldBooking();
    const asOf = new Date(booking.reserveExpiresAt.getTime() + 11 * 60_000);
    await createPropertyObjectHoldExpirationJob({ now: () => asOf }).run(jobContext({ database: t.database, env: t.env, logger: t.logger }));
    expect(await objectRow(objectId)).toMatchObject({ status: 'Free', status_source: 'ExpirationJob' });
    expect((await bookingRow(t, booking.id)).status).toBe('Reserved');
    await backbone.settled();
    return { objectId, booking, asOf };
  }
  /** the check at the safety net's clock (its writes carry that time; earlier they look in flight) */
  const findingsAt = async (objectId: string, asOf: Date) =>
    (await runReconciliation(t.database.db, { now: new Date(asOf.getTime() + 1000), scope: null, settleMs: 0, consumerLag: 0 })).rows.filter((r) => r.propertyObjectId === objectId);

  it('booking_not_held offers re-hold and cancel (a republish of the applied version would be a stale no-op); re-hold makes it disappear', async () => {
    const { objectId, booking, asOf } = await freedByTheSafetyNet();
    const [finding] = await findingsAt(objectId, asOf);
    expect(finding).toMatchObject({ kind: 'booking_not_held', bookingId: booking.id, objectStatus: 'Free', cause: 'released_in_chessboard', repairs: ['rehold', 'cancel_booking'] });

    await opsCaller(t, ops).repairDivergence({ action: 'rehold', bookingId: booking.id, reason: 'crm still holds it' });
    await backbone.settled();
    expect(await objectRow(objectId)).toMatchObject({ status: 'Reserved', hold_booking_id: booking.id });
    expect(await findingsAt(objectId, asOf)).toEqual([]);
  });

  it('… or cancelling the crm booking makes it disappear', async () => {
    const { objectId, booking, asOf } = await freedByTheSafetyNet();
    expect((await findingsAt(objectId, asOf)).map((r) => r.repairs)).toEqual([['rehold', 'cancel_booking']]);
    await opsCaller(t, ops).repairDivergence({ action: 'cancel_booking', bookingId: booking.id, reason: 'the reserve lapsed' });
    await backbone.settled();
    expect((await bookingRow(t, booking.id)).status).toBe('Cancelled');
    expect((await objectRow(objectId)).status).toBe('Free');
    expect(await findingsAt(objectId, asOf)).toEqual([]);
  });
});
