import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertObjects, insertProject } from '../../test/fixtures/chessboard.fixtures';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { createBookingCommand } from './commands/create-booking';
import { confirmBookingCommand } from './commands/confirm-booking';
import { actor, callerFor, expectTrpcError, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { listBookings } from './queries';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { commandContext } from '../platform/command-context';

/** The read side: filters, server-side pagination and sorting, tenant scope. */

let t: TestContext;
const TENANT = randomUUID();
const OTHER = randomUUID();
const agent = actor('agent', TENANT);
const viewer = actor('viewer', TENANT);
const pin = actor('pin_manager', null);
const T0 = new Date('2030-06-01T08:00:00.000Z');
const MIN = 60_000;

const ids: Record<string, string> = {};
let program: { id: string };
let otherProgram: { id: string };
let dealWithTwo: { id: string };

async function book(tenant: string, programId: string, createdAt: Date, dealId?: string, propertyObjectId?: string) {
  propertyObjectId ??= await projectedObjectOf(t.database, tenant);
  const deal = dealId ? { id: dealId } : await insertDeal(t, tenant);
  return t.database.db.transaction((tx) =>
    createBookingCommand(tx, { dealId: deal.id, propertyObjectId, programId }, commandContext(pin, randomUUID(), createdAt)),
  );
}

beforeAll(async () => {
  t = await createTestContext();
  program = await insertProgram(t, TENANT, { reserveDurationMinutes: 60, bookingDurationHours: 48 });
  otherProgram = await insertProgram(t, OTHER);
  dealWithTwo = await insertDeal(t, TENANT);
  // five bookings of TENANT created a minute apart, one of OTHER
  for (let i = 0; i < 5; i++) {
    const b = await book(TENANT, program.id, new Date(T0.getTime() + i * MIN), i < 2 ? dealWithTwo.id : undefined);
    ids[`b${i}`] = b.id;
  }
  ids.foreign = (await book(OTHER, otherProgram.id, T0)).id;
  // b4 is Booked (booking deadline 48 h later)
  await t.database.db.transaction((tx) => confirmBookingCommand(tx, { bookingId: ids.b4! }, commandContext(pin, randomUUID(), new Date(T0.getTime() + 5 * MIN))));
});
afterAll(async () => {
  await t?.close();
});

describe('booking.list', () => {
  it('is tenant-scoped: a tenant user sees only its tenant, pin_manager sees all', async () => {
    const mine = await callerFor(t, viewer).booking.list({});
    expect(mine.total).toBe(5);
    expect(mine.items.every((b) => b.tenantId === TENANT)).toBe(true);
    expect((await callerFor(t, pin).booking.list({})).total).toBe(6);
    // asking for another tenant does not widen the scope
    expect((await callerFor(t, viewer).booking.list({ tenantId: OTHER })).total).toBe(0);
    expect((await callerFor(t, pin).booking.list({ tenantId: OTHER })).items.map((b) => b.id)).toEqual([ids.foreign]);
  });

  it('paginates and sorts on the server (createdAt desc by default, id as tie-breaker)', async () => {
    const c = callerFor(t, agent);
    const page1 = await c.booking.list({ pageSize: 2, page: 1 });
    const page2 = await c.booking.list({ pageSize: 2, page: 2 });
    const page3 = await c.booking.list({ pageSize: 2, page: 3 });
    expect(page1).toMatchObject({ total: 5, page: 1, pageSize: 2 });
    expect([...page1.items, ...page2.items, ...page3.items].map((b) => b.id)).toEqual([ids.b4, ids.b3, ids.b2, ids.b1, ids.b0]);
    const asc = await c.booking.list({ sort: 'createdAt', direction: 'asc', pageSize: 5 });
    expect(asc.items.map((b) => b.id)).toEqual([ids.b0, ids.b1, ids.b2, ids.b3, ids.b4]);
    // NULLS LAST: only b4 has a booking deadline
    const byBookingDeadline = await c.booking.list({ sort: 'bookingExpiresAt', direction: 'asc' });
    expect(byBookingDeadline.items[0]!.id).toBe(ids.b4);
  });

  it('filters by status, deal, property object, created range and id search', async () => {
    const c = callerFor(t, agent);
    expect((await c.booking.list({ status: ['Booked'] })).items.map((b) => b.id)).toEqual([ids.b4]);
    expect((await c.booking.list({ dealId: dealWithTwo.id })).total).toBe(2);
    const b2 = (await c.booking.byId({ bookingId: ids.b2! }));
    expect((await c.booking.list({ propertyObjectId: b2.propertyObjectId })).items.map((b) => b.id)).toEqual([ids.b2]);
    const range = await c.booking.list({ createdFrom: new Date(T0.getTime() + MIN), createdTo: new Date(T0.getTime() + 3 * MIN).toISOString() });
    expect(range.items.map((b) => b.id).sort()).toEqual([ids.b1, ids.b2, ids.b3].sort());
    expect((await c.booking.list({ search: ids.b3! })).items.map((b) => b.id)).toEqual([ids.b3]);
    expect((await c.booking.list({ search: ids.b3!.slice(0, 13).toUpperCase() })).items.map((b) => b.id)).toContain(ids.b3);
    expect((await c.booking.list({ search: dealWithTwo.id })).total).toBe(2);
  });

  it('expiring within N minutes: active bookings whose current deadline is at most N minutes away', async () => {
    // reserve deadlines: b0 T0+60m, b1 T0+61m, b2 T0+62m, b3 T0+63m; b4 is Booked until T0+5m+48h
    const now = new Date(T0.getTime() + 59 * MIN);
    const within2 = await listBookings(t.database.db, agent, { expiringWithinMinutes: 2 }, now);
    expect(within2.items.map((b) => b.id).sort()).toEqual([ids.b0, ids.b1].sort());
    const all = await listBookings(t.database.db, agent, { expiringWithinMinutes: 60 * 49 }, now);
    expect(all.total).toBe(5);
  });
});

describe('booking.list by project and object number (resolved by the chessboard)', () => {
  it('filters by project, finds an object number (any case), and never through another tenant', async () => {
    const projectA = await insertProject(t.database, TENANT);
    const projectB = await insertProject(t.database, TENANT);
    const foreignProject = await insertProject(t.database, OTHER);
    // insertObjects numbers objects 1000, 1001, …: "1000" exists in A, B and the foreign project
    const [a0, a1] = await insertObjects(t.database, projectA, [{ status: 'Free' }, { status: 'Free' }]);
    const [b0] = await insertObjects(t.database, projectB, [{ status: 'Free' }]);
    const [f0] = await insertObjects(t.database, foreignProject, [{ status: 'Free' }]);
    await t.database.sql`UPDATE chessboard.property_objects SET number = '12A' WHERE id = ${a1!}`;
    const at = new Date(T0.getTime() + 10 * MIN);
    const onA0 = await book(TENANT, program.id, at, undefined, a0!);
    const onA1 = await book(TENANT, program.id, at, undefined, a1!);
    const onB0 = await book(TENANT, program.id, at, undefined, b0!);
    const onF0 = await book(OTHER, otherProgram.id, at, undefined, f0!);

    const c = callerFor(t, viewer);
    const byProject = await c.booking.list({ projectId: projectA.projectId });
    expect(byProject.items.map((b) => b.id).sort()).toEqual([onA0.id, onA1.id].sort());
    expect(byProject).toMatchObject({ total: 2, objectsTruncated: false });
    // "1000" and "12a" are also hex: a booking or deal id (random) that starts with them is found too
    const byNumberOrIdPrefix = (search: string, found: { id: string; dealId: string }[], byNumber: string[]) => {
      expect(found.map((b) => b.id).filter((id) => byNumber.includes(id)).sort()).toEqual([...byNumber].sort());
      expect(found.filter((b) => !byNumber.includes(b.id) && !b.id.startsWith(search) && !b.dealId.startsWith(search))).toEqual([]);
    };
    byNumberOrIdPrefix('1000', (await c.booking.list({ search: '1000' })).items, [onA0.id, onB0.id]);
    byNumberOrIdPrefix('12a', (await c.booking.list({ search: '12a' })).items, [onA1.id]);
    expect((await c.booking.list({ search: '1000', projectId: projectB.projectId })).items.map((b) => b.id)).toEqual([onB0.id]);
    // a number that is also a hex id prefix still finds the object ("12a" above); a number that matches nothing finds nothing
    expect((await c.booking.list({ search: 'кв. 7' })).total).toBe(0);
    // a search is data, never SQL: an injection attempt is an object number that matches nothing
    expect((await c.booking.list({ search: "x' OR 1=1 --" })).total).toBe(0);
    // another tenant's project and objects are invisible: its project filters to nothing, its numbers find only own bookings
    expect((await c.booking.list({ projectId: foreignProject.projectId })).total).toBe(0);
    expect((await callerFor(t, pin).booking.list({ projectId: foreignProject.projectId })).items.map((b) => b.id)).toEqual([onF0.id]);
    byNumberOrIdPrefix('1000', (await callerFor(t, pin).booking.list({ search: '1000' })).items, [onA0.id, onB0.id, onF0.id]);
  });

  it('rejects a search with control characters and a malformed project id (BAD_REQUEST)', async () => {
    const c = callerFor(t, viewer);
    await expectTrpcError(c.booking.list({ search: 'a\u0000b' }), 'BAD_REQUEST');
    await expectTrpcError(c.booking.list({ projectId: 'not-a-uuid' }), 'BAD_REQUEST');
  });
});

describe('booking.byId', () => {
  it('returns the booking with its timeline, deal and program', async () => {
    const b = await callerFor(t, viewer).booking.byId({ bookingId: ids.b4! });
    expect(b).toMatchObject({ id: ids.b4, status: 'Booked', deal: { status: 'Booking' }, program: { id: program.id } });
    expect(b.timeline.map((r) => [r.action, r.fromStatus, r.toStatus])).toEqual([
      ['create', null, 'Reserved'],
      ['confirm', 'Reserved', 'Booked'],
    ]);
  });
  it('a foreign tenant booking is NOT_FOUND', async () => {
    await expectTrpcError(callerFor(t, viewer).booking.byId({ bookingId: ids.foreign! }), 'NOT_FOUND', 'CRM_BOOKING_NOT_FOUND');
  });
});

describe('deals and programs', () => {
  it('deal.list filters by status and is tenant-scoped; deal.byId lists its bookings', async () => {
    const draft = await insertDeal(t, TENANT, 'Draft');
    const c = callerFor(t, viewer);
    const drafts = await c.deal.list({ status: ['Draft'] });
    expect(drafts.items.map((d) => d.id)).toEqual([draft.id]);
    expect((await c.deal.list({})).items.every((d) => d.tenantId === TENANT)).toBe(true);
    const deal = await c.deal.byId({ dealId: dealWithTwo.id });
    expect(deal.bookings.map((b) => b.id).sort()).toEqual([ids.b0, ids.b1].sort());
    expect((await c.deal.list({ search: dealWithTwo.id.slice(0, 8) })).items.map((d) => d.id)).toContain(dealWithTwo.id);
  });

  it('deal.list searches the title (what the picker shows), literally and tenant-scoped; bookings name their deal', async () => {
    const mine = await insertDeal(t, TENANT);
    const foreign = await insertDeal(t, OTHER);
    await t.database.sql`UPDATE crm.deals SET title = 'Сделка №4711 (Петров_100%)' WHERE id IN (${mine.id}, ${foreign.id})`;
    await t.database.sql`UPDATE crm.deals SET title = 'Сделка №4712 (Петров 1000)' WHERE id = ${dealWithTwo.id}`;
    const c = callerFor(t, viewer);
    const found = async (search: string) => (await c.deal.list({ search })).items.map((d) => d.id).sort();
    expect(await found('петров_100%')).toEqual([mine.id]); // case-insensitive; the other tenant's twin is not shown
    expect(await found('№471')).toEqual([mine.id, dealWithTwo.id].sort());
    expect(await found('Петров_1')).toEqual([mine.id]); // `_` is a character, not "any character" (else 4712 matched)
    expect(await found('%')).toEqual([mine.id]);
    expect(await found(mine.id.slice(0, 8))).toContain(mine.id); // an id prefix still works
    await expectTrpcError(c.deal.list({ search: 'a\u0007b' }), 'BAD_REQUEST');
    const listed = await c.booking.list({ dealId: dealWithTwo.id });
    expect(listed.items.map((b) => b.dealTitle)).toEqual(['Сделка №4712 (Петров 1000)', 'Сделка №4712 (Петров 1000)']);
  });

  it('booking.programs lists the tenant’s programs only', async () => {
    expect((await callerFor(t, viewer).booking.programs()).map((p) => p.id)).toEqual([program.id]);
    expect((await callerFor(t, pin).booking.programs()).length).toBe(2);
  });
});
