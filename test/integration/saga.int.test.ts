import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bookingOf, readObject, statusChangedEvents } from '../fixtures/chessboard.fixtures';
import { crmPropertyObjectStatusConsumer } from '../../server/chessboard/crm-property-object-status.consumer';
import { PROPERTY_OBJECT_ERRORS } from '../../server/chessboard/property-object';
import { cardProjectionConsumer } from '../../server/catalog/card-projection.consumer';
import type { CrmPayload, CrmTopic } from '../../server/contracts/crm';
import { createBookingExpirationJob } from '../../server/crm/booking-expiration.job';
import { actor, bookingRow, callerFor, dealRow, insertDeal, insertProgram, outboxOf } from '../fixtures/crm.fixtures';
import { deals } from '../../server/crm/schema';
import { seedRequisiteSet } from '../fixtures/profile.fixtures';
import { runJobCycle } from '../../server/platform/jobs/run-log';
import { CONSUMER_GROUPS } from '../../server/contracts/consumer-groups';
import { dlqTopic, TOPICS, withPrefix } from '../../server/platform/kafka/topics';
import { writeOutbox } from '../../server/platform/outbox/write';
import { createTestContext, type TestContext } from '../harness/harness';
import { readTopics } from '../harness/kafka';
import { eventually, seedChessboard, startBackbone, type Backbone, type SeededChessboard } from '../harness/saga-harness';

/**
 * The event backbone end to end, through the REAL broker: crm commands (tRPC caller) and the
 * booking-expiration job write crm.outbox → the outbox relay (running continuously) → Kafka →
 * chessboard consumer (property object + chessboard.outbox) → relay → Kafka → catalog consumer (card).
 * Every assertion reads PostgreSQL after the events went through Kafka. The tests share one database,
 * one topic prefix and one pair of consumer groups and run in file order; the replay test is last
 * because it replays everything the others produced.
 */

let t: TestContext;
let backbone: Backbone;
let seeded: SeededChessboard;
const TENANT = randomUUID();
const agent = actor('agent', TENANT);
const manager = actor('developer_manager', TENANT);
let freeProgram: { id: string };
let paidProgram: { id: string };
let shortProgram: { id: string };

const OUTAGE_BOOKINGS = 200;
const OUTAGE_CONFIRMED = 50;
/** objects of the scenarios besides the outage: each test takes fresh Free ones */
const SCENARIO_OBJECTS = 16;
let nextObject = 0;
const takeObjects = (n: number) => {
  const ids = seeded.objectIds.slice(nextObject, nextObject + n);
  if (ids.length < n) throw new Error('not enough seeded objects');
  nextObject += n;
  return ids;
};
const takeObject = () => takeObjects(1)[0]!;

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  freeProgram = await insertProgram(t, TENANT, { isPaid: false, reserveDurationMinutes: 60, bookingDurationHours: 48 });
  paidProgram = await insertProgram(t, TENANT, { isPaid: true, reserveDurationMinutes: 30, bookingDurationHours: 24 });
  shortProgram = await insertProgram(t, TENANT, { isPaid: false, reserveDurationMinutes: 1, bookingDurationHours: 1 });
  seeded = await seedChessboard(t, TENANT, SCENARIO_OBJECTS + OUTAGE_BOOKINGS);
  backbone = await startBackbone(t);
  await backbone.startConsumers();
  backbone.startRelay();
  // the seed went through Kafka: every object has its catalog card (Published, sale status Free)
  await eventually(async () => {
    const [r] = await t.database.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM catalog.property_object_cards WHERE project_id = ${seeded.projectId} AND status = 'Published' AND sale_status = 'Free'`;
    const [p] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM catalog.project_cards WHERE id = ${seeded.projectId}`;
    return r!.n === seeded.objectIds.length && p!.n === 1;
  }, 'catalog cards of the seeded objects', 60_000);
  // and crm's own view of them (DESIGN decision 8), filled by crm's projection consumer from the same upserts:
  // booking.create refuses an object crm has not seen
  await eventually(async () => {
    const [r] = await t.database.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM crm.property_objects WHERE project_id = ${seeded.projectId} AND tenant_id = ${TENANT} AND status = 'Free' AND NOT deleted`;
    return r!.n === seeded.objectIds.length;
  }, 'crm.property_objects of the seeded objects', 60_000);
}, 120_000);

// a test that stops or redirects the relay (3b, 7) must not leave the next ones without it, even when it fails
afterEach(async () => {
  await backbone?.ensureLiveRelay();
});

afterAll(async () => {
  await backbone?.close();
  await t?.close();
});

// ---- reads ---------------------------------------------------------------------------------------

const objectRow = (id: string) => readObject(t.database, id);

async function cardOf(id: string) {
  const [row] = await t.database.sql<{ sale_status: string; status: string; source_version: number }[]>`
    SELECT sale_status, status, source_version FROM catalog.property_object_cards WHERE id = ${id}`;
  return row;
}

async function untilObject(id: string, status: string, extra: (o: Awaited<ReturnType<typeof objectRow>>) => boolean = () => true) {
  return eventually(async () => {
    const o = await objectRow(id);
    return o.status === status && extra(o) ? o : false;
  }, `chessboard object ${id} ${status}`);
}

/** the card follows the object: same sale status and the object's version as its source version */
async function untilCardFollows(id: string) {
  return eventually(async () => {
    const [o, c] = await Promise.all([objectRow(id), cardOf(id)]);
    return c && c.sale_status === o.status && c.source_version === o.version ? c : false;
  }, `catalog card of ${id} following its object`);
}

async function inboxRow(inbox: 'chessboard' | 'catalog' | 'crm' | 'messenger', messageId: string) {
  const consumer = inbox === 'chessboard' ? crmPropertyObjectStatusConsumer.name : cardProjectionConsumer.name;
  const [row] = await t.database.sql.unsafe<{ result: string; detail: string | null; topic: string }[]>(
    `SELECT result, detail, topic FROM ${inbox}.inbox WHERE consumer = $1 AND message_id = $2`, [consumer, messageId]);
  return row;
}
const untilInbox = (inbox: 'chessboard' | 'catalog' | 'crm' | 'messenger', messageId: string) => eventually(() => inboxRow(inbox, messageId), `${inbox} inbox row of ${messageId}`);

async function historyOf(id: string) {
  const rows = await t.database.sql<{ step: string }[]>`
    SELECT from_status || '>' || to_status AS step FROM chessboard.property_object_status_history WHERE property_object_id = ${id} ORDER BY id`;
  return rows.map((r) => r.step);
}

/** a crm outbox row written by hand (as a crm command would), for the scenarios the commands cannot produce */
async function writeCrm<T extends CrmTopic>(topic: T, payload: CrmPayload<T>, correlationId = randomUUID()): Promise<string> {
  const p = payload as { bookingId: string; tenantId: string };
  return t.database.db.transaction((tx) => writeOutbox(tx, 'crm', {
    topic, aggregateType: 'Booking', aggregateId: p.bookingId, tenantId: p.tenantId, payload: payload as never, correlationId,
  }));
}

async function createBooking(objectId: string, program: { id: string } = freeProgram, correlationId?: string) {
  const deal = await insertDeal(t, TENANT);
  const booking = await callerFor(t, agent, correlationId).booking.create({ dealId: deal.id, propertyObjectId: objectId, programId: program.id });
  return { deal, booking };
}

const consumerDuplicates = (messageIds: Set<string>, consumer: string) =>
  backbone.consumerLogLines().filter((l) => l.msg === 'consumer no-op' && l.result === 'duplicate' && l.consumer === consumer && messageIds.has(l.messageId as string));

/** Everything the consumers own or feed, plus both outboxes: what "nothing changed" compares. */
async function snapshot() {
  const { sql } = t.database;
  return {
    propertyObjects: await sql`SELECT * FROM chessboard.property_objects ORDER BY id`,
    projects: await sql`SELECT * FROM chessboard.projects ORDER BY id`,
    history: await sql`SELECT * FROM chessboard.property_object_status_history ORDER BY id`,
    bookingVersions: await sql`SELECT * FROM chessboard.crm_booking_versions ORDER BY booking_id`,
    holdMismatches: await sql`SELECT * FROM chessboard.hold_mismatches ORDER BY id`,
    chessboardInbox: await sql`SELECT * FROM chessboard.inbox ORDER BY consumer, message_id`,
    catalogInbox: await sql`SELECT * FROM catalog.inbox ORDER BY consumer, message_id`,
    crmInbox: await sql`SELECT * FROM crm.inbox ORDER BY consumer, message_id`,
    crmObjects: await sql`SELECT * FROM crm.property_objects ORDER BY id`,
    objectCards: await sql`SELECT * FROM catalog.property_object_cards ORDER BY id`,
    projectCards: await sql`SELECT * FROM catalog.project_cards ORDER BY id`,
    crmOutbox: await sql`SELECT id, message_id, topic, published_at, attempts FROM crm.outbox ORDER BY id`,
    chessboardOutbox: await sql`SELECT id, message_id, topic, published_at, attempts FROM chessboard.outbox ORDER BY id`,
  };
}

const DLQ = () => withPrefix(t.prefix, dlqTopic(CONSUMER_GROUPS.crmPropertyObjectStatus));

// ---- 1. the saga ---------------------------------------------------------------------------------

describe('1. full saga through Kafka', () => {
  it('free program: create → confirm → extend → startSale: chessboard Reserved → Booked → booked_until moved → Sold (INV-CHS-002 timers), the catalog card follows', async () => {
    const objectId = takeObject();
    const { deal, booking } = await createBooking(objectId);

    const reserved = await untilObject(objectId, 'Reserved');
    expect(reserved).toMatchObject({
      reserved_until: booking.reserveExpiresAt, booked_until: null, hold_deal_id: deal.id, hold_booking_id: booking.id, status_source: 'Crm',
    });
    expect(await untilCardFollows(objectId)).toMatchObject({ sale_status: 'Reserved', status: 'Published' });

    const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    expect(confirmed.status).toBe('Booked');
    const booked = await untilObject(objectId, 'Booked');
    expect(booked).toMatchObject({ reserved_until: null, booked_until: confirmed.bookingExpiresAt, hold_deal_id: deal.id, hold_booking_id: booking.id });
    expect(await untilCardFollows(objectId)).toMatchObject({ sale_status: 'Booked' });

    // DESIGN decision 1: extend publishes booking-extended and chessboard moves booked_until
    const extended = await callerFor(t, manager).booking.extend({ bookingId: booking.id, expectedVersion: confirmed.version });
    expect(extended.bookingExpiresAt!.getTime()).toBe(confirmed.bookingExpiresAt!.getTime() + 48 * 3600_000);
    const moved = await untilObject(objectId, 'Booked', (o) => o.booked_until?.getTime() === extended.bookingExpiresAt!.getTime());
    expect(moved).toMatchObject({ hold_deal_id: deal.id, version: booked.version + 1 });
    expect(await untilCardFollows(objectId)).toMatchObject({ sale_status: 'Booked' });

    // DESIGN decision 2: start of sale marks the object Sold
    const completed = await callerFor(t, manager).booking.startSale({ bookingId: booking.id });
    expect(completed.status).toBe('Completed');
    expect((await dealRow(t, deal.id)).status).toBe('Sale');
    const sold = await untilObject(objectId, 'Sold');
    expect(sold).toMatchObject({ reserved_until: null, booked_until: null, hold_deal_id: null, hold_booking_id: null, status_source: 'Crm' });
    expect(sold.sold_at).not.toBeNull();
    expect(await untilCardFollows(objectId)).toMatchObject({ sale_status: 'Sold' });

    expect(await historyOf(objectId)).toEqual(['Free>Reserved', 'Reserved>Booked', 'Booked>Booked', 'Booked>Sold']);
    // each transition was caused by the crm message of its command
    const crmIds = (await outboxOf(t, booking.id)).map((r) => r.messageId);
    const saleStarted = (await outboxOf(t, deal.id)).map((r) => r.messageId);
    expect((await statusChangedEvents(t.database, objectId)).map((e) => e.payload.causationId)).toEqual([...crmIds, ...saleStarted]);
  });

  it('paid program: create → uploadContract → uploadReceipt → confirmPayment: chessboard Reserved → Booked (booked_until = BookingExpiresAt)', async () => {
    const objectId = takeObject();
    const { deal, booking } = await createBooking(objectId, paidProgram);
    expect(await untilObject(objectId, 'Reserved')).toMatchObject({ reserved_until: booking.reserveExpiresAt, hold_deal_id: deal.id });
    await untilCardFollows(objectId);

    const byManager = callerFor(t, manager);
    const requisites = await seedRequisiteSet(t, manager);
    expect((await byManager.booking.uploadContract({
      bookingId: booking.id, document: 'contract-0001.pdf', requisites: { setId: requisites.id, version: requisites.version },
    })).status).toBe('AwaitingPayment');
    expect((await byManager.booking.uploadReceipt({ bookingId: booking.id, document: 'receipt-0001.pdf' })).paymentStatus).toBe('ReceiptUploaded');
    const paid = await byManager.booking.confirmPayment({ bookingId: booking.id });
    expect(paid).toMatchObject({ status: 'Booked', paymentStatus: 'Paid' });

    const booked = await untilObject(objectId, 'Booked');
    expect(booked).toMatchObject({ booked_until: paid.bookingExpiresAt, reserved_until: null, hold_deal_id: deal.id, hold_booking_id: booking.id });
    expect(await untilCardFollows(objectId)).toMatchObject({ sale_status: 'Booked' });
    // booking-paid went out too (not consumed by chessboard); confirmed carries the booking's version 4
    const topics = (await outboxOf(t, booking.id)).map((r) => r.topic);
    expect(topics).toEqual([TOPICS.bookingCreated, TOPICS.bookingPaid, TOPICS.bookingConfirmed]);
    expect(await historyOf(objectId)).toEqual(['Free>Reserved', 'Reserved>Booked']);
  });
});

// ---- 2. the releases ------------------------------------------------------------------------------

describe('2. releases through Kafka', () => {
  it('create → booking-expiration (now past ReserveExpiresAt) → booking-expired → Free', async () => {
    const objectId = takeObject();
    const { deal, booking } = await createBooking(objectId, shortProgram);
    await untilObject(objectId, 'Reserved');
    await untilCardFollows(objectId);

    const now = new Date(booking.reserveExpiresAt.getTime() + 1_000);
    const run = await runJobCycle(createBookingExpirationJob({ now: () => now }), {
      database: t.database, env: t.env, logger: t.logger, kafka: backbone.kafka, signal: new AbortController().signal,
    }, 'manual');
    expect(run.status).toBe('succeeded');
    expect(run.summary).toMatchObject({ ReserveExpiredCount: 1, BookingExpiredCount: 0, FailedCount: 0 });
    expect((await bookingRow(t, booking.id)).status).toBe('ReserveExpired');
    expect((await dealRow(t, deal.id)).status).toBe('Application');

    const expired = (await outboxOf(t, booking.id)).find((r) => r.topic === TOPICS.bookingExpired)!;
    expect(await untilInbox('chessboard', expired.messageId)).toMatchObject({ result: 'applied' });
    expect(await untilObject(objectId, 'Free')).toMatchObject({ reserved_until: null, booked_until: null, hold_deal_id: null, status_source: 'Crm' });
    expect(await untilCardFollows(objectId)).toMatchObject({ sale_status: 'Free' });
  });

  it('create → cancel → booking-cancelled → Free', async () => {
    const objectId = takeObject();
    const { booking } = await createBooking(objectId);
    await untilObject(objectId, 'Reserved');
    await untilCardFollows(objectId);

    expect((await callerFor(t, agent).booking.cancel({ bookingId: booking.id, reason: 'client changed their mind' })).status).toBe('Cancelled');
    const cancelled = (await outboxOf(t, booking.id)).find((r) => r.topic === TOPICS.bookingCancelled)!;
    expect(await untilInbox('chessboard', cancelled.messageId)).toMatchObject({ result: 'applied' });
    expect(await untilObject(objectId, 'Free')).toMatchObject({ hold_deal_id: null, reserved_until: null });
    expect(await untilCardFollows(objectId)).toMatchObject({ sale_status: 'Free' });
  });

  it('deal.cancel → deal-cancelled and booking-cancelled naming the booking: one release → Free', async () => {
    const objectId = takeObject();
    const { deal, booking } = await createBooking(objectId);
    await untilObject(objectId, 'Reserved');
    await untilCardFollows(objectId);

    const result = await callerFor(t, manager).deal.cancel({ dealId: deal.id, reason: 'the client withdrew' });
    expect(result.cancelledBookings.map((b) => b.id)).toEqual([booking.id]);
    const [dealCancelled] = await outboxOf(t, deal.id);
    expect(dealCancelled).toMatchObject({ topic: TOPICS.dealCancelled });
    expect(await untilInbox('chessboard', dealCancelled!.messageId)).toMatchObject({ topic: TOPICS.dealCancelled });
    // Deal.Cancel also publishes the booking's booking-cancelled: one of the two releases, the other is a no-op
    const [bookingCancelled] = (await outboxOf(t, booking.id)).filter((r) => r.topic === TOPICS.bookingCancelled);
    const results = [await untilInbox('chessboard', dealCancelled!.messageId), await untilInbox('chessboard', bookingCancelled!.messageId)];
    expect(results.map((r) => r.result).sort()).toEqual(['applied', 'no-op']);
    expect(await untilObject(objectId, 'Free')).toMatchObject({ hold_deal_id: null, reserved_until: null });
    expect(await untilCardFollows(objectId)).toMatchObject({ sale_status: 'Free' });
  });
});

// ---- 3. reordering --------------------------------------------------------------------------------

describe('3. cross-topic reordering (DESIGN decision 3)', () => {
  it('booking-cancelled (v2) consumed before booking-created (v1): the object ends Free (tombstone) and the late create does not re-hold it', async () => {
    const objectId = takeObject();
    const before = await objectRow(objectId);
    const b = bookingOf(objectId, TENANT);

    const cancelledId = await writeCrm(TOPICS.bookingCancelled, b.cancelled(2, 'Reserved'));
    expect(await untilInbox('chessboard', cancelledId)).toMatchObject({ result: 'no-op' });
    const [tombstone] = await t.database.sql`SELECT applied_version, released FROM chessboard.crm_booking_versions WHERE booking_id = ${b.bookingId}`;
    expect(tombstone).toEqual({ applied_version: 2, released: true });

    const createdId = await writeCrm(TOPICS.bookingCreated, b.created(new Date(Date.now() + 3600_000), 1));
    const late = await untilInbox('chessboard', createdId);
    expect(late).toMatchObject({ result: 'no-op' });
    expect(late.detail).toContain('already released');

    expect(await objectRow(objectId)).toEqual(before);
    expect(await statusChangedEvents(t.database, objectId)).toEqual([]);
    expect(await historyOf(objectId)).toEqual([]);
    expect(await cardOf(objectId)).toMatchObject({ sale_status: 'Free' });
  });
});

describe('3b. cross-topic reordering across two deals (DESIGN decisions 7 and 9)', () => {
  /**
   * Deal 1's booking is cancelled and deal 2 books the same object at once. The two events travel on
   * different topics (booking-cancelled, booking-created), so the consumer may read the create first —
   * test 7 shows the consumer reads a later-written topic first for about half the bookings of one
   * fetch. The create then meets an object still held by deal 1; deal 2's booking was created after
   * deal 1's, so the hold moves to it and deal 1's late release is a logged no-op (no DLQ, no
   * HOLD_MISMATCH). Here the release is held back deterministically (next_attempt_at) to force that order.
   */
  it('booking-created of deal 2 overtaking booking-cancelled of deal 1 on the same object: the object ends Reserved by deal 2 (DESIGN decision 7)', async () => {
    const objectId = takeObject();
    const first = await createBooking(objectId);
    await untilObject(objectId, 'Reserved');
    await backbone.stopRelay();
    await callerFor(t, agent).booking.cancel({ bookingId: first.booking.id, reason: 'client changed their mind' });
    const second = await createBooking(objectId);
    const [release] = (await outboxOf(t, first.booking.id)).filter((r) => r.topic === TOPICS.bookingCancelled);
    await t.database.sql`UPDATE crm.outbox SET next_attempt_at = now() + interval '1 hour' WHERE message_id = ${release!.messageId}`;
    backbone.startRelay();
    const [create] = await outboxOf(t, second.booking.id);
    await untilInbox('chessboard', create!.messageId);
    await t.database.sql`UPDATE crm.outbox SET next_attempt_at = NULL WHERE message_id = ${release!.messageId}`;
    await untilInbox('chessboard', release!.messageId);
    await backbone.settled();

    expect((await bookingRow(t, second.booking.id)).status).toBe('Reserved');
    // today: create rejected (HOLD_MISMATCH, DLQ), then the release frees the object → Free
    expect(await objectRow(objectId)).toMatchObject({ status: 'Reserved', hold_deal_id: second.deal.id, hold_booking_id: second.booking.id });
  });
});

// ---- 4. hold mismatch ---------------------------------------------------------------------------

describe('4. INV-CHS-003 hold guard through Kafka', () => {
  it('a booking-cancelled naming another DealId for a held object → HOLD_MISMATCH: on the DLQ topic, a hold_mismatches row, the object untouched', async () => {
    const objectId = takeObject();
    const { deal, booking } = await createBooking(objectId);
    await untilObject(objectId, 'Reserved');
    await untilCardFollows(objectId);
    const before = await objectRow(objectId);
    const eventsBefore = await statusChangedEvents(t.database, objectId);

    const wrongDealId = randomUUID();
    const messageId = await writeCrm(TOPICS.bookingCancelled, {
      bookingId: booking.id, dealId: wrongDealId, propertyObjectId: objectId, tenantId: TENANT, bookingVersion: 2,
      fromStatus: 'Reserved', reason: 'wrong deal', cancelledAt: new Date().toISOString(),
    });
    expect(await untilInbox('chessboard', messageId)).toEqual({ result: 'rejected', detail: PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH, topic: TOPICS.bookingCancelled });

    const dlq = await readTopics(backbone.kafka, [DLQ()], (all) => all.some((m) => m.headers.messageId === messageId), 30_000);
    const dead = dlq.find((m) => m.headers.messageId === messageId);
    expect(dead, 'the rejected message on the DLQ topic').toBeDefined();
    expect(dead!.headers).toMatchObject({
      'dlq.error.code': PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH,
      'dlq.original.topic': withPrefix(t.prefix, TOPICS.bookingCancelled),
      'dlq.consumer': CONSUMER_GROUPS.crmPropertyObjectStatus,
    });
    expect(dead!.key).toBe(booking.id);
    expect(JSON.parse(dead!.value!)).toMatchObject({ messageId, payload: { dealId: wrongDealId } });

    const mismatches = await t.database.sql`
      SELECT message_id, booking_id, event_deal_id, hold_deal_id, object_status, resolved_at FROM chessboard.hold_mismatches WHERE property_object_id = ${objectId}`;
    expect(mismatches).toEqual([{ message_id: messageId, booking_id: booking.id, event_deal_id: wrongDealId, hold_deal_id: deal.id, object_status: 'Reserved', resolved_at: null }]);

    expect(await objectRow(objectId)).toEqual(before);
    expect(await statusChangedEvents(t.database, objectId)).toEqual(eventsBefore);
    expect(await cardOf(objectId)).toMatchObject({ sale_status: 'Reserved' });
  });
});

// ---- 6. relay crash between publish and marking ----------------------------------------------------

describe('6. at-least-once relay: a crash after the broker ack, before the UPDATE', () => {
  it('rows whose published_at is lost are published again; both consumers dedupe them (inbox), nothing changes', async () => {
    const objectId = takeObject();
    const { booking } = await createBooking(objectId);
    await untilObject(objectId, 'Reserved');
    await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    await untilObject(objectId, 'Booked');
    await untilCardFollows(objectId);
    await backbone.settled();
    const before = await snapshot();

    const crmRows = await t.database.sql<{ message_id: string }[]>`
      UPDATE crm.outbox SET published_at = NULL WHERE aggregate_id = ${booking.id} RETURNING message_id`;
    const chessboardRows = await t.database.sql<{ message_id: string }[]>`
      UPDATE chessboard.outbox SET published_at = NULL
       WHERE aggregate_id = ${objectId} AND topic = ${TOPICS.propertyObjectStatusChanged} RETURNING message_id`;
    expect(crmRows).toHaveLength(2);
    expect(chessboardRows).toHaveLength(2);
    const crmIds = new Set(crmRows.map((r) => r.message_id));
    const chessboardIds = new Set(chessboardRows.map((r) => r.message_id));

    // delivered again and recognised as duplicates by the runner's inbox
    await eventually(async () => consumerDuplicates(crmIds, crmPropertyObjectStatusConsumer.name).length >= crmIds.size
      && consumerDuplicates(chessboardIds, cardProjectionConsumer.name).length >= chessboardIds.size, 'the re-published messages consumed as duplicates');
    await backbone.settled();

    const after = await snapshot();
    // the re-published rows were published a second time (attempts 2, a new published_at) …
    const republished = after.crmOutbox.filter((r) => crmIds.has(r.message_id as string));
    expect(republished.map((r) => r.attempts)).toEqual([2, 2]);
    // … and everything else is exactly as before: no transition, no new outbox row, one inbox row per messageId
    const withoutPublishTimes = (rows: Record<string, unknown>[], ids: Set<string>) =>
      rows.map((r) => (ids.has(r.message_id as string) ? { ...r, published_at: 'republished', attempts: 'republished' } : r));
    expect(withoutPublishTimes(after.crmOutbox, crmIds)).toEqual(withoutPublishTimes(before.crmOutbox, crmIds));
    expect(withoutPublishTimes(after.chessboardOutbox, chessboardIds)).toEqual(withoutPublishTimes(before.chessboardOutbox, chessboardIds));
    expect(after.propertyObjects).toEqual(before.propertyObjects);
    expect(after.objectCards).toEqual(before.objectCards);
    expect(after.history).toEqual(before.history);
    expect(after.chessboardInbox).toEqual(before.chessboardInbox);
    expect(after.catalogInbox).toEqual(before.catalogInbox);
    const inboxCounts = await t.database.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM chessboard.inbox WHERE message_id = ANY(${[...crmIds]}::uuid[])
      UNION ALL SELECT count(*)::int FROM catalog.inbox WHERE message_id = ANY(${[...chessboardIds]}::uuid[])`;
    expect(inboxCounts.map((r) => r.n)).toEqual([crmIds.size, chessboardIds.size]);
  });
});

// ---- 7. broker outage -----------------------------------------------------------------------------

describe('7. broker unreachable while bookings are created', () => {
  it(`${OUTAGE_BOOKINGS} creates (and ${OUTAGE_CONFIRMED} confirms) during the outage all succeed; the backlog drains when the broker is back, nothing lost, each booking's newer event wins`, async () => {
    const objectIds = takeObjects(OUTAGE_BOOKINGS);
    const dealIds = objectIds.map(() => randomUUID());
    await t.database.db.insert(deals).values(dealIds.map((id) => ({ id, tenantId: TENANT, title: 'Outage deal', status: 'Application' as const })));

    // the relay now talks to a dead broker (one quick connection attempt per cycle instead of ~40 s of retries)
    await backbone.stopRelay();
    const deadBroker = new Kafka({
      clientId: t.env.KAFKA_CLIENT_ID, brokers: ['127.0.0.1:1'], connectionTimeout: 500, logLevel: logLevel.NOTHING,
      // the idempotent producer refuses retries: 0
      retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 },
    });
    const deadRelay = backbone.startRelay(deadBroker);

    const bookings = new Array<Awaited<ReturnType<typeof createBookingFor>>>(OUTAGE_BOOKINGS);
    async function createBookingFor(i: number) {
      return callerFor(t, agent).booking.create({ dealId: dealIds[i]!, propertyObjectId: objectIds[i]!, programId: freeProgram.id });
    }
    let cursor = 0;
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, async () => {
      while (cursor < OUTAGE_BOOKINGS) {
        const i = cursor++;
        bookings[i] = await createBookingFor(i);
      }
    }));
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    expect(bookings.filter((b) => b?.status === 'Reserved')).toHaveLength(OUTAGE_BOOKINGS);
    const confirmed = await Promise.all(bookings.slice(0, OUTAGE_CONFIRMED).map((b) => callerFor(t, agent).booking.confirm({ bookingId: b.id })));
    expect(confirmed.every((b) => b.status === 'Booked')).toBe(true);

    // the relay tried and failed; every row is still unpublished and nothing reached chessboard
    await eventually(async () => deadRelay.results.filter((r) => r.status === 'failed').length >= 2, 'failed relay cycles against the dead broker');
    await backbone.stopRelay();
    const bookingIds = bookings.map((b) => b.id);
    const backlog = await t.database.sql<{ message_id: string; topic: string; aggregate_id: string; published_at: Date | null }[]>`
      SELECT message_id, topic, aggregate_id, published_at FROM crm.outbox WHERE aggregate_id = ANY(${bookingIds}::uuid[]) ORDER BY id`;
    expect(backlog).toHaveLength(OUTAGE_BOOKINGS + OUTAGE_CONFIRMED);
    expect(backlog.filter((r) => r.published_at !== null)).toEqual([]);
    const [stillFree] = await t.database.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM chessboard.property_objects WHERE id = ANY(${objectIds}::uuid[]) AND status = 'Free'`;
    expect(stillFree!.n).toBe(OUTAGE_BOOKINGS);
    const [failedRuns] = await t.database.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM ops.job_runs WHERE job = 'outbox-relay' AND status = 'failed'`;
    expect(failedRuns!.n).toBeGreaterThanOrEqual(2);
    expect(deadRelay.results.find((r) => r.status === 'failed')!.error).toMatch(/ECONNREFUSED|connect/i);

    // the broker is back
    backbone.startRelay();
    await eventually(async () => {
      const [r] = await t.database.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM chessboard.property_objects WHERE id = ANY(${objectIds}::uuid[]) AND status IN ('Reserved', 'Booked')`;
      return r!.n === OUTAGE_BOOKINGS;
    }, 'every outage booking held in chessboard', 60_000);
    await backbone.settled(60_000);

    // nothing lost: every crm message of the backlog is in the chessboard inbox
    const processed = await t.database.sql<{ message_id: string; result: string }[]>`
      SELECT message_id, result FROM chessboard.inbox WHERE message_id = ANY(${backlog.map((r) => r.message_id)}::uuid[])`;
    expect(processed).toHaveLength(backlog.length);
    const resultOf = new Map(processed.map((r) => [r.message_id, r.result]));

    const objects = await t.database.sql<{ id: string; status: string; reserved_until: string | null; booked_until: string | null; hold_deal_id: string }[]>`
      SELECT id, status, reserved_until, booked_until, hold_deal_id FROM chessboard.property_objects WHERE id = ANY(${objectIds}::uuid[])`;
    const byId = new Map(objects.map((o) => [o.id, o]));
    const histories = await t.database.sql<{ id: string; steps: string[] }[]>`
      SELECT property_object_id AS id, array_agg(from_status || '>' || to_status ORDER BY id) AS steps
        FROM chessboard.property_object_status_history WHERE property_object_id = ANY(${objectIds}::uuid[]) GROUP BY property_object_id`;
    const historyById = new Map(histories.map((h) => [h.id, h.steps]));
    const messageOf = (bookingId: string, topic: string) => backlog.find((r) => r.aggregate_id === bookingId && r.topic === topic)!.message_id;
    bookings.forEach((b, i) => {
      const o = byId.get(b.propertyObjectId)!;
      expect(o.hold_deal_id).toBe(b.dealId);
      const created = resultOf.get(messageOf(b.id, TOPICS.bookingCreated));
      if (i < OUTAGE_CONFIRMED) {
        // confirmed during the outage: Booked, never Reserved at the end — per booking, the effect of
        // booking-confirmed (v2) is applied after that of booking-created (v1). The two travel on different
        // topics, so the consumer may read them in either order (the spec promises no cross-topic order):
        // in order, or confirmed first (catch-up Free → Booked) and then the older create is a no-op.
        expect({ id: o.id, status: o.status, bookedUntil: new Date(o.booked_until!).getTime() })
          .toEqual({ id: o.id, status: 'Booked', bookedUntil: confirmed[i]!.bookingExpiresAt!.getTime() });
        expect(resultOf.get(messageOf(b.id, TOPICS.bookingConfirmed))).toBe('applied');
        const steps = historyById.get(o.id);
        if (created === 'applied') {
          expect(steps).toEqual(['Free>Reserved', 'Reserved>Booked']);
        } else {
          expect({ steps, created }).toEqual({ steps: ['Free>Booked'], created: 'no-op' });
        }
      } else {
        expect({ id: o.id, status: o.status, reservedUntil: new Date(o.reserved_until!).getTime(), created })
          .toEqual({ id: o.id, status: 'Reserved', reservedUntil: b.reserveExpiresAt.getTime(), created: 'applied' });
        expect(historyById.get(o.id)).toEqual(['Free>Reserved']);
      }
    });
    const cards = await t.database.sql<{ sale_status: string; n: number }[]>`
      SELECT sale_status, count(*)::int AS n FROM catalog.property_object_cards WHERE id = ANY(${objectIds}::uuid[]) GROUP BY sale_status ORDER BY sale_status`;
    expect(cards).toEqual([{ sale_status: 'Booked', n: OUTAGE_CONFIRMED }, { sale_status: 'Reserved', n: OUTAGE_BOOKINGS - OUTAGE_CONFIRMED }]);
  }, 90_000);
});

// ---- 8. correlation -------------------------------------------------------------------------------

describe('8. correlation and causation across the hops', () => {
  it('the caller correlationId is on the crm outbox row, on the chessboard status-changed row (causationId = the crm messageId) and on both topics\' messages', async () => {
    const objectId = takeObject();
    const correlationId = randomUUID();
    const { booking } = await createBooking(objectId, freeProgram, correlationId);
    await untilObject(objectId, 'Reserved');
    await untilCardFollows(objectId);

    const [crmRow] = await outboxOf(t, booking.id);
    expect(crmRow!.payload).toMatchObject({ correlationId, causationId: null });
    expect(crmRow!.headers).toMatchObject({ correlationId });
    const [changed] = await statusChangedEvents(t.database, objectId);
    expect(changed!.payload).toMatchObject({ correlationId, causationId: crmRow!.messageId });

    expect(await inboxRow('chessboard', crmRow!.messageId)).toMatchObject({ result: 'applied', topic: TOPICS.bookingCreated });
    expect(await untilInbox('catalog', changed!.message_id)).toMatchObject({ result: 'applied', topic: TOPICS.propertyObjectStatusChanged });

    // what the consumers actually read from Kafka carries the same ids (value and headers)
    const wanted = new Set([crmRow!.messageId, changed!.message_id]);
    const messages = await readTopics(
      backbone.kafka,
      [withPrefix(t.prefix, TOPICS.bookingCreated), withPrefix(t.prefix, TOPICS.propertyObjectStatusChanged)],
      (all) => [...wanted].every((id) => all.some((m) => m.headers.messageId === id)),
    );
    const onTopic = (id: string) => messages.find((m) => m.headers.messageId === id)!;
    const crmMessage = onTopic(crmRow!.messageId);
    expect(crmMessage.key).toBe(booking.id);
    expect(crmMessage.headers.correlationId).toBe(correlationId);
    expect(JSON.parse(crmMessage.value!)).toMatchObject({ messageId: crmRow!.messageId, correlationId });
    const chessboardMessage = onTopic(changed!.message_id);
    expect(chessboardMessage.key).toBe(objectId);
    expect(chessboardMessage.headers).toMatchObject({ correlationId, causationId: crmRow!.messageId });
    expect(JSON.parse(chessboardMessage.value!)).toMatchObject({ messageId: changed!.message_id, correlationId, causationId: crmRow!.messageId });
  });
});

// ---- 9. Deal.Cancel cascade ----------------------------------------------------------------------

describe('9. Deal.Cancel publishes booking-cancelled for every booking it ends', () => {
  it('two bookings of one deal: booking-cancelled of each and deal-cancelled through Kafka; chessboard releases each object once', async () => {
    const [a, b] = takeObjects(2);
    const deal = await insertDeal(t, TENANT);
    const first = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: a!, programId: freeProgram.id });
    const second = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: b!, programId: freeProgram.id });
    await callerFor(t, agent).booking.confirm({ bookingId: second.id });
    await untilObject(a!, 'Reserved');
    await untilObject(b!, 'Booked');

    await callerFor(t, manager).deal.cancel({ dealId: deal.id, reason: 'deal lost' });
    for (const [objectId, booking, version] of [[a!, first, 2], [b!, second, 3]] as const) {
      const [cancelled] = (await outboxOf(t, booking.id)).filter((r) => r.topic === TOPICS.bookingCancelled);
      const [dealCancelled] = (await outboxOf(t, deal.id)).filter((r) => (r.payload as { payload: { bookingId: string } }).payload.bookingId === booking.id);
      expect(cancelled, 'booking-cancelled of the ended booking').toBeDefined();
      expect((cancelled!.payload as { payload: { bookingVersion: number } }).payload.bookingVersion).toBe(version);
      // both consumed from the broker by chessboard: exactly one releases, the other is a no-op (the booking is released)
      const results = [await untilInbox('chessboard', cancelled!.messageId), await untilInbox('chessboard', dealCancelled!.messageId)];
      expect(results.map((r) => r.result).sort()).toEqual(['applied', 'no-op']);
      expect(results.find((r) => r.result === 'no-op')!.detail).toMatch(/already released|stale bookingVersion/);
      expect(await untilObject(objectId, 'Free')).toMatchObject({ hold_deal_id: null, hold_booking_id: null, status_source: 'Crm' });
      expect((await historyOf(objectId)).filter((step) => step.endsWith('>Free'))).toHaveLength(1);
    }
    await backbone.settled();
  });
});

// ---- 5. replay (last: it replays everything the scenarios above produced) -------------------------

describe('5. replaying every topic from offset 0', () => {
  it('reset both groups to earliest, restart, lag 0: chessboard, catalog, inboxes and both outboxes exactly as before', async () => {
    await backbone.settled();
    const before = await snapshot();
    const dlqEnd = async () => (await backbone.admin.fetchTopicOffsets(DLQ())).reduce((n, p) => n + Number(p.high), 0);
    const dlqBefore = await dlqEnd();

    await backbone.stopConsumers();
    await backbone.resetOffsetsToEarliest();
    const lagAfterReset = await backbone.lag();
    // the whole log is to be consumed again
    expect(lagAfterReset.get(crmPropertyObjectStatusConsumer.name)).toBeGreaterThan(OUTAGE_BOOKINGS);
    expect(lagAfterReset.get(cardProjectionConsumer.name)).toBeGreaterThan(OUTAGE_BOOKINGS);
    const linesBefore = backbone.consumerLogLines().length;

    await backbone.startConsumers();
    await eventually(async () => [...(await backbone.lag()).values()].every((n) => n === 0), 'both consumer groups at lag 0 after the replay', 60_000);
    await backbone.settled();

    const replayed = backbone.consumerLogLines().slice(linesBefore).filter((l) => l.msg === 'consumer applied' || l.msg === 'consumer no-op' || String(l.msg).includes('DLQ'));
    expect(replayed.filter((l) => l.result !== 'duplicate')).toEqual([]);
    const totalLag = [...lagAfterReset.values()].reduce((a, b) => a + b, 0);
    expect(replayed.length).toBeGreaterThanOrEqual(totalLag);

    expect(await snapshot()).toEqual(before);
    expect(await dlqEnd()).toBe(dlqBefore);
  }, 90_000);
});
