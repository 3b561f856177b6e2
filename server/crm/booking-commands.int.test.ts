import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { contracts, type Topic } from '../contracts';
import { TOPICS } from '../platform/kafka/topics';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { confirmBookingCommand } from './commands/confirm-booking';
import { createBookingCommand } from './commands/create-booking';
import { extendBookingCommand } from './commands/extend-booking';
import {
  actor, bookingRow, callerFor, crmRowCounts, dealRow, expectTrpcError, httpCall, insertDeal, insertProgram, outboxOf, timelineOf,
} from '../../test/fixtures/crm.fixtures';
import { registry } from '../platform/metrics';
import { seedRequisiteSet } from '../../test/fixtures/profile.fixtures';
import { commandContext } from '../platform/command-context';

/**
 * The Booking saga's commands through the tRPC caller on real PostgreSQL: transitions, the outbox in
 * the same transaction, INV-BKG-001 under concurrency, idempotency keys, input validation and the
 * role/tenant rules.
 */

let t: TestContext;
const TENANT = randomUUID();
const OTHER_TENANT = randomUUID();
let freeProgram: { id: string };
let paidProgram: { id: string };
let otherTenantProgram: { id: string };

const agent = actor('agent', TENANT);
const manager = actor('developer_manager', TENANT);
const pin = actor('pin_manager', null);
const foreignManager = actor('developer_manager', OTHER_TENANT);
const foreignAgent = actor('agent', OTHER_TENANT);

beforeAll(async () => {
  t = await createTestContext();
  freeProgram = await insertProgram(t, TENANT, { isPaid: false, reserveDurationMinutes: 60, bookingDurationHours: 48 });
  paidProgram = await insertProgram(t, TENANT, { isPaid: true, reserveDurationMinutes: 30, bookingDurationHours: 24 });
  otherTenantProgram = await insertProgram(t, OTHER_TENANT);
});
afterAll(async () => {
  await t?.close();
});

/** A Free object of `tenantId` in crm's view (crm.property_objects), as the projection would have it. */
const obj = (tenantId: string = TENANT) => projectedObjectOf(t.database, tenantId);

async function newBooking(opts: { program?: { id: string }; by?: ReturnType<typeof actor>; dealStatus?: 'Application' | 'Booking' } = {}) {
  const deal = await insertDeal(t, TENANT, opts.dealStatus ?? 'Application');
  // a paid booking carries the buyer's requisites (needed before upload-contract)
  const requisites = opts.program === paidProgram ? await seedRequisiteSet(t, opts.by ?? agent).then((s) => ({ setId: s.id, version: s.version })) : undefined;
  const booking = await callerFor(t, opts.by ?? agent).booking.create({
    dealId: deal.id,
    propertyObjectId: await obj(),
    programId: (opts.program ?? freeProgram).id,
    requisites,
  });
  return { deal, booking };
}

/** Every outbox row validates against its topic's shared contract; returns the parsed envelopes. */
function parsedEnvelopes(rows: Awaited<ReturnType<typeof outboxOf>>) {
  return rows.map((row) => {
    const envelope = contracts[row.topic as Topic].parse(row.payload);
    expect(row.key).toBe(envelope.aggregateId);
    expect(row.messageId).toBe(envelope.messageId);
    return { topic: row.topic, envelope, payload: envelope.payload as Record<string, unknown> };
  });
}

describe('create (INV-BKG-2, INV-BKG-001)', () => {
  it('booking-created names the deal\'s agent (messenger: who may write in the deal chat)', async () => {
    const agentId = randomUUID();
    const deal = await insertDeal(t, TENANT, 'Application', agentId);
    const booking = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id });
    const [created] = parsedEnvelopes(await outboxOf(t, booking.id));
    expect(created!.payload).toMatchObject({ bookingId: booking.id, agentId });
  });

  it('reserves: Reserved with ReserveExpiresAt = CreatedAt + 60 min, deal Application → Booking, timeline + booking-created in one commit', async () => {
    const correlationId = randomUUID();
    const deal = await insertDeal(t, TENANT, 'Application');
    const propertyObjectId = await obj();
    const booking = await callerFor(t, agent, correlationId).booking.create({ dealId: deal.id, propertyObjectId, programId: freeProgram.id });

    expect(booking).toMatchObject({ status: 'Reserved', version: 1, dealId: deal.id, tenantId: TENANT, propertyObjectId, paymentStatus: 'NotRequired', createdBy: agent.userId });
    expect(booking.reserveExpiresAt.getTime() - booking.createdAt.getTime()).toBe(60 * 60_000);
    expect((await dealRow(t, deal.id)).status).toBe('Booking');

    const events = parsedEnvelopes(await outboxOf(t, booking.id));
    expect(events.map((e) => e.topic)).toEqual([TOPICS.bookingCreated]);
    expect(events[0]!.envelope).toMatchObject({ aggregateType: 'Booking', aggregateId: booking.id, tenantId: TENANT, correlationId, type: 'BookingCreated' });
    expect(events[0]!.payload).toMatchObject({
      bookingId: booking.id, dealId: deal.id, propertyObjectId, tenantId: TENANT, bookingVersion: 1, status: 'Reserved',
      reserveExpiresAt: booking.reserveExpiresAt.toISOString(),
      // the deal's agent (this deal has none): the deal chat's participants come from the events (messenger)
      agentId: null,
    });

    const timeline = await timelineOf(t, booking.id);
    expect(timeline).toHaveLength(1);
    expect(timeline[0]).toMatchObject({
      action: 'create', fromStatus: null, toStatus: 'Reserved', actorType: 'user', actorId: agent.userId, correlationId, bookingVersion: 1,
      messageIds: [events[0]!.envelope.messageId],
    });
  });

  it('INV-BKG-2: a Draft deal cannot book (CRM_BOOKING_DEAL_NOT_ENGAGED), nothing is written', async () => {
    const deal = await insertDeal(t, TENANT, 'Draft');
    const before = await crmRowCounts(t);
    await expectTrpcError(
      callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id }),
      'PRECONDITION_FAILED',
      'CRM_BOOKING_DEAL_NOT_ENGAGED',
    );
    expect(await crmRowCounts(t)).toEqual(before);
  });

  it('a deal already in Booking may book another object; the deal stays in Booking', async () => {
    const { deal } = await newBooking();
    const second = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id });
    expect(second.status).toBe('Reserved');
    expect((await dealRow(t, deal.id)).status).toBe('Booking');
  });

  it('INV-BKG-001: two concurrent creates on one object → exactly one succeeds, the other CRM_BOOKING_PROPERTY_OBJECT_BUSY (CONFLICT)', async () => {
    for (let i = 0; i < 10; i++) {
      const propertyObjectId = await obj();
      const [dealA, dealB] = await Promise.all([insertDeal(t, TENANT), insertDeal(t, TENANT)]);
      const results = await Promise.allSettled([
        callerFor(t, agent).booking.create({ dealId: dealA.id, propertyObjectId, programId: freeProgram.id }),
        callerFor(t, pin).booking.create({ dealId: dealB.id, propertyObjectId, programId: freeProgram.id }),
      ]);
      const ok = results.filter((r) => r.status === 'fulfilled');
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(ok).toHaveLength(1);
      expect(failed).toHaveLength(1);
      expect(failed[0]!.reason).toBeInstanceOf(TRPCError);
      expect(failed[0]!.reason.code).toBe('CONFLICT');
      expect(failed[0]!.reason.cause.code).toBe('CRM_BOOKING_PROPERTY_OBJECT_BUSY');
      const [{ n }] = await t.database.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM crm.bookings WHERE property_object_id = ${propertyObjectId}`;
      expect(n).toBe(1);
      // the loser's deal was not projected to Booking and it wrote no event
      const loserDeal = (ok[0] as PromiseFulfilledResult<{ dealId: string }>).value.dealId === dealA.id ? dealB : dealA;
      expect((await dealRow(t, loserDeal.id)).status).toBe('Application');
      expect(await outboxOf(t, loserDeal.id)).toHaveLength(0);
    }
  });

  it('INV-BKG-001 also serialises two creates of one deal on one object', async () => {
    const deal = await insertDeal(t, TENANT);
    const propertyObjectId = await obj();
    const results = await Promise.allSettled([
      callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId, programId: freeProgram.id }),
      callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId, programId: freeProgram.id }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect(failed.reason.cause.code).toBe('CRM_BOOKING_PROPERTY_OBJECT_BUSY');
  });

  it('a released object can be booked again', async () => {
    const { booking } = await newBooking();
    await callerFor(t, agent).booking.cancel({ bookingId: booking.id, reason: 'changed object' });
    const deal = await insertDeal(t, TENANT);
    const again = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: booking.propertyObjectId, programId: freeProgram.id });
    expect(again.status).toBe('Reserved');
  });

  it('a program of another tenant is CRM_PROGRAM_NOT_FOUND', async () => {
    const deal = await insertDeal(t, TENANT);
    await expectTrpcError(
      callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: otherTenantProgram.id }),
      'NOT_FOUND',
      'CRM_PROGRAM_NOT_FOUND',
    );
  });
});

describe('free branch: confirm, extend, start sale', () => {
  it('INV-BKG-3: confirm → Booked with BookingExpiresAt = BookedAt + 48 h and booking-confirmed carrying bookingVersion 2', async () => {
    const { booking } = await newBooking();
    const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id, expectedVersion: 1 });
    expect(confirmed).toMatchObject({ status: 'Booked', version: 2 });
    expect(confirmed.bookingExpiresAt!.getTime() - confirmed.bookedAt!.getTime()).toBe(48 * 3_600_000);
    const events = parsedEnvelopes(await outboxOf(t, booking.id));
    expect(events.map((e) => e.topic)).toEqual([TOPICS.bookingCreated, TOPICS.bookingConfirmed]);
    expect(events[1]!.payload).toMatchObject({ bookingVersion: 2, status: 'Booked', bookingExpiresAt: confirmed.bookingExpiresAt!.toISOString() });
  });

  it('confirm at ReserveExpiresAt + 1 ms → CRM_BOOKING_RESERVE_EXPIRED (command with an explicit clock), nothing written', async () => {
    const { booking } = await newBooking();
    const before = await crmRowCounts(t);
    const late = new Date(booking.reserveExpiresAt.getTime() + 1);
    await expect(
      t.database.db.transaction((tx) => confirmBookingCommand(tx, { bookingId: booking.id }, commandContext(agent, randomUUID(), late))),
    ).rejects.toMatchObject({ code: 'CRM_BOOKING_RESERVE_EXPIRED', kind: 'PRECONDITION_FAILED' });
    // exactly at the deadline it still passes (INV-BKG-3: now ≤ ReserveExpiresAt)
    expect(await crmRowCounts(t)).toEqual(before);
    const onTime = await t.database.db.transaction((tx) =>
      confirmBookingCommand(tx, { bookingId: booking.id }, commandContext(agent, randomUUID(), booking.reserveExpiresAt)),
    );
    expect(onTime.status).toBe('Booked');
  });

  it('confirm through the router after the reserve lapsed (worker not yet run) → PRECONDITION_FAILED CRM_BOOKING_RESERVE_EXPIRED', async () => {
    const { booking } = await newBooking();
    await t.database.sql`UPDATE crm.bookings SET reserve_expires_at = now() - interval '1 millisecond' WHERE id = ${booking.id}`;
    await expectTrpcError(callerFor(t, agent).booking.confirm({ bookingId: booking.id }), 'PRECONDITION_FAILED', 'CRM_BOOKING_RESERVE_EXPIRED');
    expect((await bookingRow(t, booking.id)).status).toBe('Reserved');
  });

  it('INV-BKG-6: extend on Reserved → CRM_BOOKING_INVALID_TRANSITION; on Booked adds 48 h and writes booking-extended (DESIGN decision 1)', async () => {
    const { booking } = await newBooking();
    await expectTrpcError(callerFor(t, manager).booking.extend({ bookingId: booking.id, expectedVersion: 1 }), 'CONFLICT', 'CRM_BOOKING_INVALID_TRANSITION');
    const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const extended = await callerFor(t, manager).booking.extend({ bookingId: booking.id, expectedVersion: 2 });
    expect(extended.version).toBe(3);
    expect(extended.bookingExpiresAt!.getTime()).toBe(confirmed.bookingExpiresAt!.getTime() + 48 * 3_600_000);
    const events = parsedEnvelopes(await outboxOf(t, booking.id));
    expect(events.map((e) => e.topic)).toEqual([TOPICS.bookingCreated, TOPICS.bookingConfirmed, TOPICS.bookingExtended]);
    expect(events[2]!.payload).toMatchObject({
      bookingVersion: 3,
      previousBookingExpiresAt: confirmed.bookingExpiresAt!.toISOString(),
      bookingExpiresAt: extended.bookingExpiresAt!.toISOString(),
    });
    const timeline = await timelineOf(t, booking.id);
    expect(timeline.map((r) => [r.action, r.fromStatus, r.toStatus, r.bookingVersion])).toEqual([
      ['create', null, 'Reserved', 1],
      ['confirm', 'Reserved', 'Booked', 2],
      ['extend', 'Booked', 'Booked', 3],
    ]);
  });

  it('DESIGN decision 10: extend without expectedVersion or idempotencyKey is VALIDATION_ERROR and writes nothing', async () => {
    const { booking } = await newBooking();
    await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const before = await crmRowCounts(t);
    // over HTTP the answer's domainCode is VALIDATION_ERROR (the bad-input table below); here, the zod refusal itself
    const refused = await expectTrpcError(callerFor(t, manager).booking.extend({ bookingId: booking.id }), 'BAD_REQUEST');
    expect(refused.cause).toBeInstanceOf(ZodError);
    await expect(t.database.db.transaction((tx) => extendBookingCommand(tx, { bookingId: booking.id }, commandContext(manager, randomUUID()))))
      .rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await crmRowCounts(t)).toEqual(before);
  });

  it('DESIGN decision 10: 20 parallel extends with one idempotency key extend once and all answer the first result', async () => {
    const { booking } = await newBooking();
    const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const key = `extend-${randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => callerFor(t, manager).booking.extend({ bookingId: booking.id, idempotencyKey: key })));
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({ version: 3, extensionCount: 1, bookingExpiresAt: new Date(confirmed.bookingExpiresAt!.getTime() + 48 * 3_600_000) });
    expect((await bookingRow(t, booking.id)).version).toBe(3);
    expect(parsedEnvelopes(await outboxOf(t, booking.id)).filter((e) => e.topic === TOPICS.bookingExtended)).toHaveLength(1);
  });

  it('DESIGN decision 10: 20 parallel extends naming one version extend once; the other 19 are CRM_BOOKING_VERSION_CONFLICT', async () => {
    const { booking } = await newBooking();
    const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => callerFor(t, manager).booking.extend({ bookingId: booking.id, expectedVersion: confirmed.version })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused.map((r) => (r.reason as { cause?: { code?: string } }).cause?.code)).toEqual(Array(19).fill('CRM_BOOKING_VERSION_CONFLICT'));
    expect(parsedEnvelopes(await outboxOf(t, booking.id)).filter((e) => e.topic === TOPICS.bookingExtended)).toHaveLength(1);
  });

  it('DESIGN decision 10: at most the program\'s max_extensions extensions; the next is CRM_BOOKING_EXTENSION_LIMIT_REACHED (409) and writes nothing', async () => {
    const programId = randomUUID();
    await t.database.sql`INSERT INTO crm.booking_programs (id, tenant_id, name, is_paid, max_extensions) VALUES (${programId}, ${TENANT}, 'One extension', false, 1)`;
    const { booking } = await newBooking({ program: { id: programId } });
    const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const once = await callerFor(t, manager).booking.extend({ bookingId: booking.id, expectedVersion: confirmed.version });
    expect(once.extensionCount).toBe(1);
    const before = await crmRowCounts(t);
    await expectTrpcError(callerFor(t, manager).booking.extend({ bookingId: booking.id, expectedVersion: once.version }), 'CONFLICT', 'CRM_BOOKING_EXTENSION_LIMIT_REACHED');
    expect(await crmRowCounts(t)).toEqual(before);
    // the seeded programs' default is two
    const [{ max_extensions }] = await t.database.sql<{ max_extensions: number }[]>`SELECT max_extensions FROM crm.booking_programs WHERE id = ${freeProgram.id}`;
    expect(max_extensions).toBe(2);
  });

  it('INV-BKG-7: startSale → booking Completed and deal Sale in one transaction, deal-sale-started keyed by the deal', async () => {
    const { deal, booking } = await newBooking();
    await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const completed = await callerFor(t, manager).booking.startSale({ bookingId: booking.id });
    expect(completed).toMatchObject({ status: 'Completed', version: 3 });
    expect((await dealRow(t, deal.id)).status).toBe('Sale');
    const [saleStarted] = parsedEnvelopes(await outboxOf(t, deal.id));
    expect(saleStarted!.topic).toBe(TOPICS.dealSaleStarted);
    expect(saleStarted!.envelope).toMatchObject({ aggregateType: 'Deal', aggregateId: deal.id });
    expect(saleStarted!.payload).toMatchObject({ dealId: deal.id, bookingId: booking.id, propertyObjectId: booking.propertyObjectId, bookingVersion: 3 });
    // INV-BKG-8: Completed is terminal
    await expectTrpcError(callerFor(t, pin).booking.cancel({ bookingId: booking.id, reason: 'too late' }), 'CONFLICT', 'CRM_BOOKING_INVALID_TRANSITION');
  });

  it('a refused or stale command says over HTTP what the booking is now (data.currentStatus), so the UI can tell the user what happened', async () => {
    const { booking } = await newBooking();
    await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    // a second manager's dialog still shows version 1 (Reserved): stale → VERSION_CONFLICT, now Booked
    const stale = await httpCall(t, manager, 'booking.confirm', { bookingId: booking.id, expectedVersion: 1 }, 'mutation');
    expect(stale.status).toBe(409);
    expect(stale.error).toMatchObject({ domainCode: 'CRM_BOOKING_VERSION_CONFLICT', currentStatus: 'Booked' });
    // without a version: the transition itself is refused, with the status that refused it
    const again = await httpCall(t, agent, 'booking.confirm', { bookingId: booking.id }, 'mutation');
    expect(again.error).toMatchObject({ domainCode: 'CRM_BOOKING_INVALID_TRANSITION', currentStatus: 'Booked' });
    // other errors carry no status
    const missing = await httpCall(t, agent, 'booking.confirm', { bookingId: randomUUID() }, 'mutation');
    expect(missing.error).toMatchObject({ domainCode: 'CRM_BOOKING_NOT_FOUND' });
    expect((missing.error as Record<string, unknown>).currentStatus ?? null).toBeNull();
  });

  it('startSale on a Reserved booking is refused and leaves the deal as it was', async () => {
    const { deal, booking } = await newBooking();
    await expectTrpcError(callerFor(t, manager).booking.startSale({ bookingId: booking.id }), 'CONFLICT', 'CRM_BOOKING_INVALID_TRANSITION');
    expect((await dealRow(t, deal.id)).status).toBe('Booking');
  });

  it('a stale expectedVersion → CRM_BOOKING_VERSION_CONFLICT, nothing written', async () => {
    const { booking } = await newBooking();
    await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const before = await crmRowCounts(t);
    await expectTrpcError(callerFor(t, manager).booking.extend({ bookingId: booking.id, expectedVersion: 1 }), 'CONFLICT', 'CRM_BOOKING_VERSION_CONFLICT');
    expect(await crmRowCounts(t)).toEqual(before);
  });
});

describe('paid branch (INV-BKG-4)', () => {
  it('uploadContract → AwaitingPayment, uploadReceipt, confirmPayment → Booked + Paid; booking-paid and booking-confirmed in one commit', async () => {
    const { booking } = await newBooking({ program: paidProgram });
    expect(booking.paymentStatus).toBe('Pending');
    expect(booking.reserveExpiresAt.getTime() - booking.createdAt.getTime()).toBe(30 * 60_000);
    await expectTrpcError(callerFor(t, agent).booking.confirm({ bookingId: booking.id }), 'PRECONDITION_FAILED', 'CRM_BOOKING_PAYMENT_REQUIRED');

    const m = callerFor(t, manager);
    const awaiting = await m.booking.uploadContract({ bookingId: booking.id, document: 'files/contract-1.pdf' });
    expect(awaiting).toMatchObject({ status: 'AwaitingPayment', paymentStatus: 'ContractUploaded', version: 2 });
    await expectTrpcError(m.booking.confirmPayment({ bookingId: booking.id }), 'PRECONDITION_FAILED', 'CRM_BOOKING_RECEIPT_MISSING');
    const receipt = await m.booking.uploadReceipt({ bookingId: booking.id, document: 'files/receipt-1.pdf' });
    expect(receipt).toMatchObject({ status: 'AwaitingPayment', paymentStatus: 'ReceiptUploaded', version: 3 });
    // uploads are internal: no integration event
    expect((await outboxOf(t, booking.id)).map((r) => r.topic)).toEqual([TOPICS.bookingCreated]);

    const booked = await m.booking.confirmPayment({ bookingId: booking.id, expectedVersion: 3 });
    expect(booked).toMatchObject({ status: 'Booked', paymentStatus: 'Paid', version: 4 });
    expect(booked.bookingExpiresAt!.getTime() - booked.bookedAt!.getTime()).toBe(24 * 3_600_000);

    const rows = await outboxOf(t, booking.id);
    const events = parsedEnvelopes(rows);
    expect(events.map((e) => e.topic)).toEqual([TOPICS.bookingCreated, TOPICS.bookingPaid, TOPICS.bookingConfirmed]);
    expect(events[1]!.payload.bookingVersion).toBe(4);
    expect(events[2]!.payload.bookingVersion).toBe(4);
    // one commit: both rows were inserted by the same transaction
    const xmins = await t.database.sql<{ xmin: string }[]>`
      SELECT xmin::text AS xmin FROM crm.outbox WHERE message_id IN ${t.database.sql([events[1]!.envelope.messageId, events[2]!.envelope.messageId])}`;
    expect(new Set(xmins.map((r) => r.xmin)).size).toBe(1);
    const timeline = await timelineOf(t, booking.id);
    expect(timeline.at(-1)).toMatchObject({ action: 'confirmPayment', fromStatus: 'AwaitingPayment', toStatus: 'Booked', messageIds: [events[1]!.envelope.messageId, events[2]!.envelope.messageId] });
    expect(timeline.map((r) => r.action)).toEqual(['create', 'uploadContract', 'uploadReceipt', 'confirmPayment']);
  });

  it('uploadContract on a free program → CRM_BOOKING_PROGRAM_NOT_PAID', async () => {
    const { booking } = await newBooking();
    await expectTrpcError(
      callerFor(t, manager).booking.uploadContract({ bookingId: booking.id, document: 'files/c.pdf' }),
      'PRECONDITION_FAILED',
      'CRM_BOOKING_PROGRAM_NOT_PAID',
    );
  });
});

describe('cancel (INV-BKG-8) and Deal.Cancel', () => {
  it('cancel → Cancelled, deal back to Application, booking-cancelled with fromStatus and reason', async () => {
    const { deal, booking } = await newBooking();
    await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const cancelled = await callerFor(t, manager).booking.cancel({ bookingId: booking.id, reason: 'client changed their mind' });
    expect(cancelled).toMatchObject({ status: 'Cancelled', version: 3, closedReason: 'client changed their mind' });
    expect((await dealRow(t, deal.id)).status).toBe('Application');
    const events = parsedEnvelopes(await outboxOf(t, booking.id));
    expect(events.at(-1)).toMatchObject({ topic: TOPICS.bookingCancelled, payload: expect.objectContaining({ fromStatus: 'Booked', bookingVersion: 3, reason: 'client changed their mind' }) });
    await expectTrpcError(callerFor(t, manager).booking.cancel({ bookingId: booking.id, reason: 'again' }), 'CONFLICT', 'CRM_BOOKING_INVALID_TRANSITION');
  });

  it('the deal stays in Booking while another of its bookings is active', async () => {
    const { deal, booking } = await newBooking();
    await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id });
    await callerFor(t, agent).booking.cancel({ bookingId: booking.id, reason: 'other object' });
    expect((await dealRow(t, deal.id)).status).toBe('Booking');
  });

  it('deal.cancel cancels the active booking and writes deal-cancelled naming it (key = DealId)', async () => {
    const { deal, booking } = await newBooking();
    const result = await callerFor(t, manager).deal.cancel({ dealId: deal.id, reason: 'developer refused' });
    expect(result.deal.status).toBe('Cancelled');
    expect(result.cancelledBookings.map((b) => b.id)).toEqual([booking.id]);
    expect(await bookingRow(t, booking.id)).toMatchObject({ status: 'Cancelled', version: 2 });
    expect((await dealRow(t, deal.id)).status).toBe('Cancelled');
    const dealEvents = parsedEnvelopes(await outboxOf(t, deal.id));
    expect(dealEvents).toHaveLength(1);
    expect(dealEvents[0]!.envelope).toMatchObject({ type: 'DealCancelled', aggregateType: 'Deal', aggregateId: deal.id });
    expect(dealEvents[0]!.payload).toMatchObject({ dealId: deal.id, bookingId: booking.id, propertyObjectId: booking.propertyObjectId, bookingVersion: 2 });
    // the ended booking's own booking-cancelled (every consumer of that topic learns), same bookingVersion
    const bookingEvents = parsedEnvelopes(await outboxOf(t, booking.id)).filter((e) => e.envelope.type === 'BookingCancelled');
    expect(bookingEvents).toHaveLength(1);
    expect(bookingEvents[0]!.payload).toMatchObject({ bookingId: booking.id, dealId: deal.id, bookingVersion: 2, fromStatus: 'Reserved', reason: 'developer refused' });
    expect((await timelineOf(t, booking.id)).at(-1)).toMatchObject({
      action: 'dealCancel', toStatus: 'Cancelled', messageIds: [bookingEvents[0]!.envelope.messageId, dealEvents[0]!.envelope.messageId],
    });
    // Sale and Cancelled deals are final
    await expectTrpcError(callerFor(t, manager).deal.cancel({ dealId: deal.id, reason: 'again' }), 'CONFLICT', 'CRM_DEAL_INVALID_TRANSITION');
  });

  it('deal.cancel of a deal without an active booking writes one deal-cancelled with bookingId null', async () => {
    const deal = await insertDeal(t, TENANT, 'Draft');
    await callerFor(t, pin).deal.cancel({ dealId: deal.id, reason: 'duplicate' });
    const [event] = parsedEnvelopes(await outboxOf(t, deal.id));
    expect(event!.payload).toMatchObject({ bookingId: null, propertyObjectId: null, bookingVersion: null });
  });
});

describe('transactional outbox', () => {
  it('a forced failure after the aggregate update (outbox insert fails) leaves neither the booking change nor any row', async () => {
    const { booking } = await newBooking();
    const before = await crmRowCounts(t);
    await t.database.sql.unsafe(`
      CREATE FUNCTION crm_test_fail_confirmed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'forced failure'; END $$;
      CREATE TRIGGER crm_test_fail_confirmed BEFORE INSERT ON crm.outbox FOR EACH ROW
        WHEN (NEW.topic = '${TOPICS.bookingConfirmed}') EXECUTE FUNCTION crm_test_fail_confirmed();`);
    try {
      await expectTrpcError(callerFor(t, agent).booking.confirm({ bookingId: booking.id }), 'INTERNAL_SERVER_ERROR');
    } finally {
      await t.database.sql.unsafe(`DROP TRIGGER crm_test_fail_confirmed ON crm.outbox; DROP FUNCTION crm_test_fail_confirmed();`);
    }
    expect(await bookingRow(t, booking.id)).toMatchObject({ status: 'Reserved', version: 1, bookedAt: null });
    expect(await crmRowCounts(t)).toEqual(before);
    // and without the fault the same command commits all three
    await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    expect((await outboxOf(t, booking.id)).map((r) => r.topic)).toEqual([TOPICS.bookingCreated, TOPICS.bookingConfirmed]);
  });
});

describe('idempotency keys', () => {
  it('a replay with the same key and input returns the first booking and writes nothing', async () => {
    const deal = await insertDeal(t, TENANT);
    const input = { dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id, idempotencyKey: `create-${randomUUID()}` };
    const first = await callerFor(t, agent).booking.create(input);
    const after = await crmRowCounts(t);
    const created = await registry.getSingleMetric('crm_bookings_created_total')!.get();
    const replay = await callerFor(t, agent).booking.create(input);
    expect(replay).toEqual(first);
    expect(replay.createdAt).toBeInstanceOf(Date);
    expect(await crmRowCounts(t)).toEqual(after);
    // a replay is not a second creation
    expect(await registry.getSingleMetric('crm_bookings_created_total')!.get()).toEqual(created);
  });

  it('a replayed confirm returns the first result even though the booking moved on', async () => {
    const { booking } = await newBooking();
    const key = `confirm-${randomUUID()}`;
    const first = await callerFor(t, agent).booking.confirm({ bookingId: booking.id, idempotencyKey: key });
    await callerFor(t, manager).booking.extend({ bookingId: booking.id, expectedVersion: first.version });
    const before = await crmRowCounts(t);
    expect(await callerFor(t, agent).booking.confirm({ bookingId: booking.id, idempotencyKey: key })).toEqual(first);
    expect(await crmRowCounts(t)).toEqual(before);
  });

  it('the same key with a different input (or by another caller) → CRM_IDEMPOTENCY_KEY_REUSED (CONFLICT), nothing written', async () => {
    const deal = await insertDeal(t, TENANT);
    const key = `create-${randomUUID()}`;
    await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id, idempotencyKey: key });
    const before = await crmRowCounts(t);
    await expectTrpcError(
      callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id, idempotencyKey: key }),
      'CONFLICT',
      'CRM_IDEMPOTENCY_KEY_REUSED',
    );
    await expectTrpcError(
      callerFor(t, actor('agent', TENANT)).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id, idempotencyKey: key }),
      'CONFLICT',
      'CRM_IDEMPOTENCY_KEY_REUSED',
    );
    expect(await crmRowCounts(t)).toEqual(before);
  });

  it('concurrent calls with one key run the command once', async () => {
    const deal = await insertDeal(t, TENANT);
    const input = { dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id, idempotencyKey: `create-${randomUUID()}` };
    const results = await Promise.all([1, 2, 3].map(() => callerFor(t, agent).booking.create(input)));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    const [{ n }] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.bookings WHERE deal_id = ${deal.id}`;
    expect(n).toBe(1);
  });

  it('a failed first call stores no key: the retry runs the command', async () => {
    const draft = await insertDeal(t, TENANT, 'Draft');
    const key = `create-${randomUUID()}`;
    const input = { dealId: draft.id, propertyObjectId: await obj(), programId: freeProgram.id, idempotencyKey: key };
    await expectTrpcError(callerFor(t, agent).booking.create(input), 'PRECONDITION_FAILED', 'CRM_BOOKING_DEAL_NOT_ENGAGED');
    await t.database.sql`UPDATE crm.deals SET status = 'Application' WHERE id = ${draft.id}`;
    expect((await callerFor(t, agent).booking.create(input)).status).toBe('Reserved');
  });
});

describe('input validation: bad input to every procedure is a typed error and writes nothing', () => {
  const uuid = '5d0c1e36-7c1f-4b44-9b59-0b0e0a1b2c3d';
  const long = 'x'.repeat(501);
  const cases: { path: string; type: 'mutation' | 'query'; input: unknown; status: number; code: string; domainCode: string }[] = [];
  const bad = (path: string, type: 'mutation' | 'query', inputs: unknown[]) =>
    inputs.forEach((input) => cases.push({ path, type, input, status: 400, code: 'BAD_REQUEST', domainCode: 'VALIDATION_ERROR' }));
  const missing = (path: string, type: 'mutation' | 'query', input: unknown, domainCode: string) =>
    cases.push({ path, type, input, status: 404, code: 'NOT_FOUND', domainCode });

  bad('booking.create', 'mutation', [
    {},
    { dealId: uuid, propertyObjectId: uuid },
    { dealId: 42, propertyObjectId: uuid, programId: uuid },
    { dealId: 'not-a-uuid', propertyObjectId: uuid, programId: uuid },
    { dealId: uuid, propertyObjectId: uuid, programId: uuid, idempotencyKey: long },
    { dealId: uuid, propertyObjectId: uuid, programId: uuid, status: 'Booked' },
  ]);
  for (const path of ['booking.confirm', 'booking.confirmPayment', 'booking.extend', 'booking.startSale']) {
    bad(path, 'mutation', [{}, { bookingId: 7 }, { bookingId: 'abc' }, { bookingId: uuid, expectedVersion: 'one' }, { bookingId: uuid, expectedVersion: -1 }, { bookingId: uuid, extra: true }]);
    missing(path, 'mutation', { bookingId: uuid, expectedVersion: 1 }, 'CRM_BOOKING_NOT_FOUND');
  }
  // DESIGN decision 10: an extend names the version it extends or carries an idempotency key
  bad('booking.extend', 'mutation', [{ bookingId: uuid }]);
  for (const path of ['booking.uploadContract', 'booking.uploadReceipt']) {
    bad(path, 'mutation', [{ bookingId: uuid }, { bookingId: uuid, document: '' }, { bookingId: uuid, document: long }, { bookingId: uuid, document: 5 }]);
    missing(path, 'mutation', { bookingId: uuid, document: 'files/a.pdf' }, 'CRM_BOOKING_NOT_FOUND');
  }
  bad('booking.cancel', 'mutation', [{ bookingId: uuid }, { bookingId: uuid, reason: long }, { bookingId: uuid, reason: '   ' }, { reason: 'x' }]);
  missing('booking.cancel', 'mutation', { bookingId: uuid, reason: 'x' }, 'CRM_BOOKING_NOT_FOUND');
  bad('deal.cancel', 'mutation', [{}, { dealId: uuid }, { dealId: uuid, reason: long }, { dealId: 'x', reason: 'y' }]);
  missing('deal.cancel', 'mutation', { dealId: uuid, reason: 'x' }, 'CRM_DEAL_NOT_FOUND');
  missing('booking.create', 'mutation', { dealId: uuid, propertyObjectId: uuid, programId: uuid }, 'CRM_DEAL_NOT_FOUND');
  bad('booking.byId', 'query', [{}, { bookingId: 'x' }]);
  missing('booking.byId', 'query', { bookingId: uuid }, 'CRM_BOOKING_NOT_FOUND');
  bad('booking.list', 'query', [{ pageSize: 1000 }, { status: ['Nope'] }, { search: 'x'.repeat(37) }, { search: 'a\u0007b' }, { expiringWithinMinutes: -5 }, { sort: 'password' }, { page: 0 }]);
  bad('deal.list', 'query', [{ status: ['Open'] }, { pageSize: 0 }]);
  bad('deal.byId', 'query', [{ dealId: 1 }]);
  missing('deal.byId', 'query', { dealId: uuid }, 'CRM_DEAL_NOT_FOUND');

  it.each(cases)('$path $input → $code $domainCode', async ({ path, type, input, status, code, domainCode }) => {
    const before = await crmRowCounts(t);
    const res = await httpCall(t, pin, path, input, type);
    expect(res.status).toBe(status);
    expect(res.error).toMatchObject({ code, domainCode });
    expect(await crmRowCounts(t)).toEqual(before);
  });

  it('the caller sees a ZodError cause for a bad input (no domain code leaks from parsing)', async () => {
    const error = await expectTrpcError(callerFor(t, pin).booking.confirm({ bookingId: 'abc' } as never), 'BAD_REQUEST');
    expect(error.cause).toBeInstanceOf(ZodError);
  });

  it('a create for a program id that does not exist → CRM_PROGRAM_NOT_FOUND, nothing written', async () => {
    const deal = await insertDeal(t, TENANT);
    const before = await crmRowCounts(t);
    const res = await httpCall(t, agent, 'booking.create', { dealId: deal.id, propertyObjectId: uuid, programId: randomUUID() }, 'mutation');
    expect(res.error).toMatchObject({ code: 'NOT_FOUND', domainCode: 'CRM_PROGRAM_NOT_FOUND' });
    expect(await crmRowCounts(t)).toEqual(before);
  });
});

describe('roles and tenants', () => {
  const COMMANDS = ['create', 'uploadContract', 'uploadReceipt', 'confirm', 'confirmPayment', 'extend', 'cancel', 'startSale'] as const;

  it.each(['viewer', 'ops'] as const)('%s is FORBIDDEN on every command, nothing written', async (role) => {
    const { deal, booking } = await newBooking();
    const who = actor(role, role === 'ops' ? null : TENANT);
    const before = await crmRowCounts(t);
    const inputs: Record<(typeof COMMANDS)[number], unknown> = {
      create: { dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id },
      uploadContract: { bookingId: booking.id, document: 'd' },
      uploadReceipt: { bookingId: booking.id, document: 'd' },
      confirm: { bookingId: booking.id },
      confirmPayment: { bookingId: booking.id },
      extend: { bookingId: booking.id, idempotencyKey: randomUUID() },
      cancel: { bookingId: booking.id, reason: 'r' },
      startSale: { bookingId: booking.id },
    };
    for (const command of COMMANDS) {
      const res = await httpCall(t, who, `booking.${command}`, inputs[command], 'mutation');
      expect(res.status, command).toBe(403);
      expect(res.error?.code).toBe('FORBIDDEN');
    }
    expect((await httpCall(t, who, 'deal.cancel', { dealId: deal.id, reason: 'r' }, 'mutation')).status).toBe(403);
    expect(await crmRowCounts(t)).toEqual(before);
    // read-only roles can read
    expect((await callerFor(t, who).booking.byId({ bookingId: booking.id })).id).toBe(booking.id);
  });

  it('unauthenticated calls are UNAUTHORIZED', async () => {
    const res = await httpCall(t, null, 'booking.list', {}, 'query');
    expect(res.status).toBe(401);
  });

  it('a developer_manager of another tenant gets NOT_FOUND for every booking command, deal.cancel and reads (no existence leak)', async () => {
    const { deal, booking } = await newBooking();
    const f = callerFor(t, foreignManager);
    const before = await crmRowCounts(t);
    await expectTrpcError(f.booking.confirm({ bookingId: booking.id }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    await expectTrpcError(f.booking.extend({ bookingId: booking.id, expectedVersion: 1 }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    await expectTrpcError(f.booking.cancel({ bookingId: booking.id, reason: 'r' }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    await expectTrpcError(f.booking.startSale({ bookingId: booking.id }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    await expectTrpcError(f.booking.uploadContract({ bookingId: booking.id, document: 'd' }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    await expectTrpcError(f.booking.uploadReceipt({ bookingId: booking.id, document: 'd' }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    await expectTrpcError(f.booking.confirmPayment({ bookingId: booking.id }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    await expectTrpcError(f.deal.cancel({ dealId: deal.id, reason: 'r' }), 'NOT_FOUND', 'CRM_DEAL_NOT_FOUND');
    await expectTrpcError(f.booking.byId({ bookingId: booking.id }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    await expectTrpcError(f.deal.byId({ dealId: deal.id }), 'NOT_FOUND', 'CRM_DEAL_NOT_FOUND');
    expect((await f.booking.list({ dealId: deal.id })).total).toBe(0);
    expect(await crmRowCounts(t)).toEqual(before);
    // an agent of another tenant cannot book on this tenant's deal
    await expectTrpcError(
      callerFor(t, foreignAgent).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id }),
      'NOT_FOUND',
      'CRM_DEAL_NOT_FOUND',
    );
  });

  it('an agent cancels only its own bookings; a manager of the tenant may cancel any', async () => {
    const { booking: mine } = await newBooking({ by: agent });
    const { booking: theirs } = await newBooking({ by: actor('agent', TENANT) });
    expect((await callerFor(t, agent).booking.cancel({ bookingId: mine.id, reason: 'mine' })).status).toBe('Cancelled');
    await expectTrpcError(callerFor(t, agent).booking.cancel({ bookingId: theirs.id, reason: 'not mine' }), 'FORBIDDEN', 'CRM_BOOKING_NOT_OWNER');
    expect((await bookingRow(t, theirs.id)).status).toBe('Reserved');
    expect((await callerFor(t, manager).booking.cancel({ bookingId: theirs.id, reason: 'manager' })).status).toBe('Cancelled');
  });

  it('role gates: an agent cannot upload, extend or start a sale; a developer_manager cannot create', async () => {
    const { deal, booking } = await newBooking();
    await expectTrpcError(callerFor(t, agent).booking.extend({ bookingId: booking.id, expectedVersion: 1 }), 'FORBIDDEN');
    await expectTrpcError(callerFor(t, agent).booking.uploadContract({ bookingId: booking.id, document: 'd' }), 'FORBIDDEN');
    await expectTrpcError(callerFor(t, agent).booking.startSale({ bookingId: booking.id }), 'FORBIDDEN');
    await expectTrpcError(callerFor(t, agent).deal.cancel({ dealId: deal.id, reason: 'r' }), 'FORBIDDEN');
    await expectTrpcError(
      callerFor(t, manager).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id }),
      'FORBIDDEN',
    );
  });

  it('a tenant-scoped role without a tenant sees nothing (FORBIDDEN), never everything', async () => {
    const { booking } = await newBooking();
    await expectTrpcError(callerFor(t, actor('developer_manager', null)).booking.confirm({ bookingId: booking.id }), 'FORBIDDEN', 'CRM_FORBIDDEN');
    await expectTrpcError(callerFor(t, actor('viewer', null)).booking.list({}), 'FORBIDDEN', 'CRM_FORBIDDEN');
  });

  it('pin_manager works across tenants', async () => {
    const otherDeal = await insertDeal(t, OTHER_TENANT);
    const booking = await callerFor(t, pin).booking.create({ dealId: otherDeal.id, propertyObjectId: await obj(OTHER_TENANT), programId: otherTenantProgram.id });
    expect(booking.tenantId).toBe(OTHER_TENANT);
    expect((await callerFor(t, pin).booking.confirm({ bookingId: booking.id })).status).toBe('Booked');
  });
});

describe('command through the direct function (tx, input, ctx)', () => {
  it('runs inside a caller-owned transaction and rolls back with it', async () => {
    const deal = await insertDeal(t, TENANT);
    const before = await crmRowCounts(t);
    await expect(
      t.database.db.transaction(async (tx) => {
        await createBookingCommand(tx, { dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id }, commandContext(agent, randomUUID()));
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await crmRowCounts(t)).toEqual(before);
  });
});

describe('saga metrics (after commit, never for a replay)', () => {
  /** a counter's value, or with metricName `<histogram>_count` a histogram's observation count */
  async function value(name: string, labels: Record<string, string>, metricName = name): Promise<number> {
    const metric = registry.getSingleMetric(name);
    if (!metric) return 0;
    const { values } = await metric.get();
    const match = values.find(
      (v) => ((v as { metricName?: string }).metricName ?? name) === metricName && Object.entries(labels).every(([k, val]) => v.labels[k] === val),
    );
    return match?.value ?? 0;
  }

  it('crm_bookings_created_total{initiated_by} counts creations by role', async () => {
    const agentBefore = await value('crm_bookings_created_total', { initiated_by: 'agent' });
    const pinBefore = await value('crm_bookings_created_total', { initiated_by: 'pin_manager' });
    await newBooking({ by: agent });
    await newBooking({ by: pin });
    expect(await value('crm_bookings_created_total', { initiated_by: 'agent' })).toBe(agentBefore + 1);
    expect(await value('crm_bookings_created_total', { initiated_by: 'pin_manager' })).toBe(pinBefore + 1);
  });

  it('crm_booking_confirm_total{result} and the reserve phase duration', async () => {
    const ok = await value('crm_booking_confirm_total', { result: 'success' });
    const expired = await value('crm_booking_confirm_total', { result: 'CRM_BOOKING_RESERVE_EXPIRED' });
    const phase = 'crm_booking_saga_phase_duration_seconds';
    const reserveCount = await value(phase, { phase: 'reserve' }, `${phase}_count`);
    const { booking } = await newBooking();
    await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    const { booking: late } = await newBooking();
    await t.database.sql`UPDATE crm.bookings SET reserve_expires_at = now() - interval '1 second' WHERE id = ${late.id}`;
    await expectTrpcError(callerFor(t, agent).booking.confirm({ bookingId: late.id }), 'PRECONDITION_FAILED');
    expect(await value('crm_booking_confirm_total', { result: 'success' })).toBe(ok + 1);
    expect(await value('crm_booking_confirm_total', { result: 'CRM_BOOKING_RESERVE_EXPIRED' })).toBe(expired + 1);
    expect(await value(phase, { phase: 'reserve' }, `${phase}_count`)).toBe(reserveCount + 1);
  });

  it('crm_booking_cancel_total{result} and the booking/saga phase durations of a sale', async () => {
    const success = await value('crm_booking_cancel_total', { result: 'success' });
    const notOwner = await value('crm_booking_cancel_total', { result: 'CRM_BOOKING_NOT_OWNER' });
    const cascade = await value('crm_booking_cancel_total', { result: 'deal_cancelled' });
    const phase = 'crm_booking_saga_phase_duration_seconds';
    const bookingCount = await value(phase, { phase: 'booking' }, `${phase}_count`);
    const sagaCount = await value(phase, { phase: 'saga' }, `${phase}_count`);

    const { booking } = await newBooking();
    await expectTrpcError(callerFor(t, actor('agent', TENANT)).booking.cancel({ bookingId: booking.id, reason: 'x' }), 'FORBIDDEN');
    await callerFor(t, agent).booking.cancel({ bookingId: booking.id, reason: 'x' });
    const { deal } = await newBooking();
    await callerFor(t, manager).deal.cancel({ dealId: deal.id, reason: 'x' });
    const { booking: sold } = await newBooking();
    await callerFor(t, agent).booking.confirm({ bookingId: sold.id });
    await callerFor(t, manager).booking.startSale({ bookingId: sold.id });

    expect(await value('crm_booking_cancel_total', { result: 'success' })).toBe(success + 1);
    expect(await value('crm_booking_cancel_total', { result: 'CRM_BOOKING_NOT_OWNER' })).toBe(notOwner + 1);
    expect(await value('crm_booking_cancel_total', { result: 'deal_cancelled' })).toBe(cascade + 1);
    expect(await value(phase, { phase: 'booking' }, `${phase}_count`)).toBe(bookingCount + 1);
    expect(await value(phase, { phase: 'saga' }, `${phase}_count`)).toBe(sagaCount + 1);
  });
});

describe('Deal.Cancel with several active bookings', () => {
  it('cancels every active booking and writes one deal-cancelled per released booking', async () => {
    const { deal, booking: first } = await newBooking();
    const second = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await obj(), programId: freeProgram.id });
    await callerFor(t, agent).booking.confirm({ bookingId: second.id });
    const result = await callerFor(t, pin).deal.cancel({ dealId: deal.id, reason: 'deal lost' });
    expect(result.cancelledBookings.map((b) => b.id).sort()).toEqual([first.id, second.id].sort());
    const events = parsedEnvelopes(await outboxOf(t, deal.id));
    expect(events.map((e) => [e.payload.bookingId, e.payload.bookingVersion]).sort()).toEqual(
      [[first.id, 2], [second.id, 3]].sort(),
    );
    // … and a booking-cancelled per ended booking, in the same transaction, with the same bookingVersion
    for (const [b, version, fromStatus] of [[first, 2, 'Reserved'], [second, 3, 'Booked']] as const) {
      const cancelled = parsedEnvelopes(await outboxOf(t, b.id)).filter((e) => e.envelope.type === 'BookingCancelled');
      expect(cancelled).toHaveLength(1);
      expect(cancelled[0]!.payload).toMatchObject({ bookingId: b.id, dealId: deal.id, bookingVersion: version, fromStatus, reason: 'deal lost' });
      const [timeline] = (await timelineOf(t, b.id)).filter((r) => r.toStatus === 'Cancelled');
      expect(timeline!.messageIds).toEqual(expect.arrayContaining([cancelled[0]!.envelope.messageId]));
    }
  });
});
