import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '../contracts';
import { registry } from '../platform/metrics';
import { TOPICS } from '../platform/kafka/topics';
import { seedRequisiteSet } from '../../test/fixtures/profile.fixtures';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { actor, bookingRow, callerFor, crmRowCounts, expectTrpcError, insertDeal, insertProgram, outboxOf } from '../../test/fixtures/crm.fixtures';
import { bookingPrograms, crmPropertyObjects, deals } from './schema';

/**
 * The investor (saga: CreateBooking by "агент / инвестор / Менеджер ПИН"): it sees and acts only on the
 * deals whose investor_id is its own — across developers — and never confirms a booking or a payment.
 */

const A = randomUUID();
const B = randomUUID();
let t: TestContext;
const investor = actor('investor', null);
const otherInvestor = actor('investor', null);
const agentA = actor('agent', A);
const managerA = actor('developer_manager', A);
let programA: { id: string };
let paidA: { id: string };
let programB: { id: string };

async function investorDeal(tenantId: string, owner: string | null = investor.userId, status: 'Draft' | 'Application' = 'Application') {
  const deal = await insertDeal(t, tenantId, status, agentA.userId);
  await t.database.db.update(deals).set({ investorId: owner }).where(eq(deals.id, deal.id));
  return deal;
}

async function counter(name: string, labels: Record<string, string>): Promise<number> {
  const { values } = await registry.getSingleMetric(name)!.get();
  return values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))?.value ?? 0;
}

beforeAll(async () => {
  t = await createTestContext();
  programA = await insertProgram(t, A);
  paidA = await insertProgram(t, A, { isPaid: true });
  programB = await insertProgram(t, B);
});
afterAll(async () => {
  await t?.close();
});

describe('investor: booking on its own deals', () => {
  it('books a free flat on its own deal (any developer); the event names the deal\'s investor; initiated_by="investor" counts it', async () => {
    const before = await counter('crm_bookings_created_total', { initiated_by: 'investor' });
    const dealA = await investorDeal(A);
    const dealB = await investorDeal(B);
    const a = await callerFor(t, investor).booking.create({ dealId: dealA.id, propertyObjectId: await projectedObjectOf(t.database, A), programId: programA.id });
    const b = await callerFor(t, investor).booking.create({ dealId: dealB.id, propertyObjectId: await projectedObjectOf(t.database, B), programId: programB.id });
    expect([a.status, a.createdBy, b.tenantId]).toEqual(['Reserved', investor.userId, B]);
    const [created] = await outboxOf(t, a.id);
    const envelope = contracts[TOPICS.bookingCreated].parse(created!.payload);
    expect(envelope.payload).toMatchObject({ investorId: investor.userId, agentId: agentA.userId, createdBy: investor.userId });
    expect(await counter('crm_bookings_created_total', { initiated_by: 'investor' })).toBe(before + 2);
  });

  it('another investor\'s deal answers NOT_FOUND exactly like a random id, and writes nothing', async () => {
    const foreign = await investorDeal(A, otherInvestor.userId);
    const unowned = await investorDeal(A, null);
    const counts = await crmRowCounts(t);
    const object = await projectedObjectOf(t.database, A);
    const answers = [];
    for (const dealId of [foreign.id, unowned.id, randomUUID()]) {
      const e = await expectTrpcError(callerFor(t, investor).booking.create({ dealId, propertyObjectId: object, programId: programA.id }), 'NOT_FOUND', 'CRM_DEAL_NOT_FOUND');
      answers.push((e as { message?: string }).message);
    }
    expect(new Set(answers).size).toBe(1);
    expect(await crmRowCounts(t)).toEqual(counts);
  });

  it('the same refusals as an agent: a Draft deal (INV-BKG-2), an object another booking holds (INV-BKG-001), an object of another developer', async () => {
    const draft = await investorDeal(A, investor.userId, 'Draft');
    await expectTrpcError(callerFor(t, investor).booking.create({ dealId: draft.id, propertyObjectId: await projectedObjectOf(t.database, A), programId: programA.id }), 'PRECONDITION_FAILED');
    const busy = await projectedObjectOf(t.database, A);
    await callerFor(t, agentA).booking.create({ dealId: (await insertDeal(t, A)).id, propertyObjectId: busy, programId: programA.id });
    await expectTrpcError(callerFor(t, investor).booking.create({ dealId: (await investorDeal(A)).id, propertyObjectId: busy, programId: programA.id }), 'CONFLICT', 'CRM_BOOKING_PROPERTY_OBJECT_BUSY');
    await expectTrpcError(callerFor(t, investor).booking.create({ dealId: (await investorDeal(A)).id, propertyObjectId: await projectedObjectOf(t.database, B), programId: programA.id }), 'NOT_FOUND', 'CRM_PROPERTY_OBJECT_NOT_FOUND');
  });

  it('never confirms: booking.confirm and booking.confirmPayment are FORBIDDEN even on its own deal', async () => {
    const deal = await investorDeal(A);
    const booking = await callerFor(t, investor).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, A), programId: programA.id });
    await expectTrpcError(callerFor(t, investor).booking.confirm({ bookingId: booking.id }), 'FORBIDDEN');
    await expectTrpcError(callerFor(t, investor).booking.confirmPayment({ bookingId: booking.id }), 'FORBIDDEN');
    await expectTrpcError(callerFor(t, investor).booking.extend({ bookingId: booking.id, expectedVersion: 1 }), 'FORBIDDEN');
    await expectTrpcError(callerFor(t, investor).deal.cancel({ dealId: deal.id, reason: 'no' }), 'FORBIDDEN');
    expect((await bookingRow(t, booking.id)).status).toBe('Reserved');
  });

  it('cancels its own reserve; not the agent\'s booking on its deal, nor a booking of another investor\'s deal', async () => {
    const deal = await investorDeal(A);
    const mine = await callerFor(t, investor).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, A), programId: programA.id });
    expect((await callerFor(t, investor).booking.cancel({ bookingId: mine.id, reason: 'changed plans' })).status).toBe('Cancelled');
    const byAgent = await callerFor(t, agentA).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, A), programId: programA.id });
    await expectTrpcError(callerFor(t, investor).booking.cancel({ bookingId: byAgent.id, reason: 'x' }), 'FORBIDDEN', 'CRM_BOOKING_NOT_OWNER');
    const foreignDeal = await investorDeal(A, otherInvestor.userId);
    const theirs = await callerFor(t, otherInvestor).booking.create({ dealId: foreignDeal.id, propertyObjectId: await projectedObjectOf(t.database, A), programId: programA.id });
    await expectTrpcError(callerFor(t, investor).booking.cancel({ bookingId: theirs.id, reason: 'x' }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    expect((await bookingRow(t, theirs.id)).status).toBe('Reserved');
  });

  it('books a paid programme and uploads the receipt once the manager attached the buyer\'s requisites with the contract; the manager confirms the payment and booking-paid carries the programme\'s reward for the deal\'s agent', async () => {
    await t.database.db.update(bookingPrograms).set({ rewardKind: 'percent', rewardValue: 1.5 }).where(eq(bookingPrograms.id, paidA.id));
    const deal = await investorDeal(A);
    const object = await projectedObjectOf(t.database, A);
    await t.database.db.update(crmPropertyObjects).set({ price: 12_345_670 }).where(eq(crmPropertyObjects.id, object));
    // the buyer's requisites are the developer manager's set: an investor may not reference it (only a set's
    // creator and the tenant's managers may), so the manager attaches it with the contract
    const set = await seedRequisiteSet(t, managerA);
    const requisites = { setId: set.id, version: set.version };
    await expectTrpcError(callerFor(t, investor).booking.create({ dealId: deal.id, propertyObjectId: object, programId: paidA.id, requisites }), 'NOT_FOUND');
    const booking = await callerFor(t, investor).booking.create({ dealId: deal.id, propertyObjectId: object, programId: paidA.id });
    const withContract = await callerFor(t, managerA).booking.uploadContract({ bookingId: booking.id, document: 'contract.pdf', requisites, expectedVersion: booking.version });
    const withReceipt = await callerFor(t, investor).booking.uploadReceipt({ bookingId: booking.id, document: 'receipt.pdf', expectedVersion: withContract.version });
    expect(withReceipt.paymentStatus).toBe('ReceiptUploaded');
    // another investor cannot even see it
    await expectTrpcError(callerFor(t, otherInvestor).booking.uploadReceipt({ bookingId: booking.id, document: 'r2.pdf' }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    await callerFor(t, managerA).booking.confirmPayment({ bookingId: booking.id });
    const paid = (await outboxOf(t, booking.id)).find((r) => r.topic === TOPICS.bookingPaid)!;
    expect(contracts[TOPICS.bookingPaid].parse(paid.payload).payload).toMatchObject({
      agentId: agentA.userId, reward: { kind: 'percent', value: 1.5, price: 12_345_670, amount: 185_185.05 },
    });
  });
});

describe('programme reward rule', () => {
  it('the developer manager sets its programme\'s reward; another developer\'s programme is NOT_FOUND; bad values are refused and write nothing', async () => {
    const program = await insertProgram(t, A, { isPaid: true });
    const set = await callerFor(t, managerA).booking.setProgramReward({ programId: program.id, reward: { kind: 'fixed', value: 75_000 } });
    expect([set.rewardKind, set.rewardValue]).toEqual(['fixed', 75_000]);
    await expectTrpcError(callerFor(t, actor('developer_manager', B)).booking.setProgramReward({ programId: program.id, reward: null }), 'NOT_FOUND', 'CRM_PROGRAM_NOT_FOUND');
    await expectTrpcError(callerFor(t, managerA).booking.setProgramReward({ programId: program.id, reward: { kind: 'percent', value: 150 } }), 'BAD_REQUEST');
    await expectTrpcError(callerFor(t, investor).booking.setProgramReward({ programId: program.id, reward: null }), 'FORBIDDEN');
    const [row] = await t.database.db.select().from(bookingPrograms).where(eq(bookingPrograms.id, program.id));
    expect([row!.rewardKind, row!.rewardValue]).toEqual(['fixed', 75_000]);
  });
});

describe('investor: reads', () => {
  it('deal and booking lists show only its deals (across developers); another\'s deal and booking are NOT_FOUND', async () => {
    const mineA = await investorDeal(A);
    const mineB = await investorDeal(B);
    const theirs = await investorDeal(A, otherInvestor.userId);
    const theirBooking = await callerFor(t, otherInvestor).booking.create({ dealId: theirs.id, propertyObjectId: await projectedObjectOf(t.database, A), programId: programA.id });
    const me = callerFor(t, investor);
    const dealsSeen = (await me.deal.list({ pageSize: 100 })).items;
    expect(dealsSeen.every((d) => d.investorId === investor.userId)).toBe(true);
    expect(dealsSeen.map((d) => d.id)).toEqual(expect.arrayContaining([mineA.id, mineB.id]));
    expect(dealsSeen.map((d) => d.id)).not.toContain(theirs.id);
    const bookingsSeen = (await me.booking.list({ pageSize: 100 })).items;
    expect(bookingsSeen.length).toBeGreaterThan(0);
    const ownDeals = new Set(dealsSeen.map((d) => d.id));
    expect(bookingsSeen.every((b) => ownDeals.has(b.dealId))).toBe(true);
    await expectTrpcError(me.deal.byId({ dealId: theirs.id }), 'NOT_FOUND', 'CRM_DEAL_NOT_FOUND');
    await expectTrpcError(me.booking.byId({ bookingId: theirBooking.id }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
    expect((await me.deal.byId({ dealId: mineB.id })).id).toBe(mineB.id);
    // the programmes of the developers of its deals, to choose from when booking
    const programs = (await me.booking.programs()).map((p) => p.tenantId);
    expect(new Set(programs)).toEqual(new Set([A, B]));
    // an investor without deals sees nothing, not everything
    expect((await callerFor(t, actor('investor', null)).deal.list({})).total).toBe(0);
  });
});
