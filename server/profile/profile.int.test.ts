import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, bookingRow, callerFor, expectTrpcError, httpCall, insertDeal, insertProgram, outboxOf } from '../crm/crm-test-fixtures';
import { createTestContext, type TestContext } from '../testing/harness';
import { projectedObjectOf } from '../testing/crm-projection';
import { requisiteReadsOf } from './queries';
import { uniqueRequisites } from './test-fixtures';

/**
 * profile on real PostgreSQL through the tRPC caller: encryption at rest, masking, the audited reveal,
 * versions, erasure rules, roles and tenants, and crm's reference check (booking.create / uploadContract).
 */

let t: TestContext;
const TENANT = randomUUID();
const OTHER = randomUUID();
const agent = actor('agent', TENANT);
const otherAgent = actor('agent', TENANT);
const manager = actor('developer_manager', TENANT);
const pin = actor('pin_manager', null);
const foreignManager = actor('developer_manager', OTHER);
const viewer = actor('viewer', TENANT);
const ops = actor('ops', null);
let freeProgram: { id: string };
let paidProgram: { id: string };

beforeAll(async () => {
  t = await createTestContext();
  freeProgram = await insertProgram(t, TENANT);
  paidProgram = await insertProgram(t, TENANT, { isPaid: true });
});
afterAll(async () => {
  await t?.close();
});

const profileCounts = async () => {
  const [r] = await t.database.sql<{ sets: number; versions: number; reads: number; erasures: number }[]>`
    SELECT (SELECT count(*)::int FROM profile.requisite_sets) AS sets, (SELECT count(*)::int FROM profile.requisite_set_versions) AS versions,
           (SELECT count(*)::int FROM profile.requisite_reads) AS reads, (SELECT count(*)::int FROM profile.requisite_erasures) AS erasures`;
  return r!;
};

async function bookWith(requisites: { setId: string; version: number } | undefined, program = freeProgram, by = agent) {
  const deal = await insertDeal(t, TENANT);
  return callerFor(t, by).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, TENANT), programId: program.id, requisites });
}

describe('requisite sets', () => {
  it('encrypted at rest: the raw column is not the clear text and contains no field value', async () => {
    const fields = uniqueRequisites();
    const set = await callerFor(t, agent).profile.create({ fields });
    expect(set.version).toBe(1);
    const rows = await t.database.sql<Record<string, unknown>[]>`SELECT * FROM profile.requisite_set_versions WHERE set_id = ${set.id}`;
    expect(rows).toHaveLength(1);
    const raw = JSON.stringify(rows[0]);
    expect(rows[0]!.ciphertext).toMatch(/^v1\./);
    expect(rows[0]!.key_id).toBe('k1');
    for (const [k, v] of Object.entries(fields)) expect(raw, k).not.toContain(v);
    const setRow = JSON.stringify(await t.database.sql`SELECT * FROM profile.requisite_sets WHERE id = ${set.id}`);
    for (const [k, v] of Object.entries(fields)) expect(setRow, k).not.toContain(v);
  });

  it('list is masked (surname initial + initials, passport •••• last 4), reveal gives the fields and writes one audit row', async () => {
    const fields = { ...uniqueRequisites(), fullName: 'Смирнова Анна Сергеевна', passportNumber: '123987' };
    const set = await callerFor(t, agent).profile.create({ fields });
    const [listed] = await callerFor(t, manager).profile.list({ setId: set.id });
    expect(listed).toMatchObject({ id: set.id, version: 1, erased: false, masked: { name: 'С••••• А. С.', passport: '•••• 3987' } });
    const listedText = JSON.stringify(listed);
    for (const [k, v] of Object.entries(fields)) if (k !== 'passportIssuedAt') expect(listedText, k).not.toContain(v);
    expect(await requisiteReadsOf(t.database.db, set.id)).toHaveLength(0);

    const correlationId = randomUUID();
    const revealed = await callerFor(t, manager, correlationId).profile.reveal({ setId: set.id });
    expect(revealed).toMatchObject({ id: set.id, version: 1, bookingId: null, fields });
    const reads = await requisiteReadsOf(t.database.db, set.id);
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatchObject({ actorId: manager.userId, actorRole: 'developer_manager', bookingId: null, version: 1, tenantId: TENANT, correlationId });
  });

  it('edit writes a new version (the old one stays); a stale expectedVersion is a conflict; a booking reveals the version it was made with', async () => {
    const v1 = uniqueRequisites();
    const set = await callerFor(t, agent).profile.create({ fields: v1 });
    const booking = await bookWith({ setId: set.id, version: 1 });
    const v2 = uniqueRequisites();
    expect(await callerFor(t, manager).profile.edit({ setId: set.id, expectedVersion: 1, fields: v2 })).toEqual({ id: set.id, version: 2 });
    await expectTrpcError(callerFor(t, manager).profile.edit({ setId: set.id, expectedVersion: 1, fields: v2 }), 'CONFLICT', 'PROFILE_REQUISITE_SET_VERSION_CONFLICT');
    expect((await callerFor(t, manager).profile.reveal({ setId: set.id })).fields).toEqual(v2);
    const forBooking = await callerFor(t, manager).profile.reveal({ setId: set.id, bookingId: booking.id });
    expect(forBooking).toMatchObject({ version: 1, currentVersion: 2, bookingId: booking.id, fields: v1 });
    expect((await requisiteReadsOf(t.database.db, set.id))[0]).toMatchObject({ bookingId: booking.id, version: 1 });
    // the agent who made the booking reads it for the booking even though another agent made the set
    const bySomeoneElse = await callerFor(t, otherAgent).profile.create({ fields: uniqueRequisites() });
    const hisBooking = await bookWith({ setId: bySomeoneElse.id, version: 1 }, freeProgram, agent);
    await expectTrpcError(callerFor(t, agent).profile.reveal({ setId: bySomeoneElse.id }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND');
    expect((await callerFor(t, agent).profile.reveal({ setId: bySomeoneElse.id, bookingId: hisBooking.id })).id).toBe(bySomeoneElse.id);
    // a booking that does not reference the set
    await expectTrpcError(callerFor(t, manager).profile.reveal({ setId: bySomeoneElse.id, bookingId: booking.id }), 'NOT_FOUND', 'PROFILE_BOOKING_NOT_FOUND');
  });

  it('roles and tenants: viewer and ops never (FORBIDDEN), a foreign tenant and another agent see NOT_FOUND; nothing read is audited', async () => {
    const set = await callerFor(t, agent).profile.create({ fields: uniqueRequisites() });
    const before = await profileCounts();
    for (const who of [viewer, ops]) {
      await expectTrpcError(callerFor(t, who).profile.reveal({ setId: set.id }), 'FORBIDDEN');
      await expectTrpcError(callerFor(t, who).profile.list({}), 'FORBIDDEN');
      await expectTrpcError(callerFor(t, who).profile.create({ fields: uniqueRequisites() }), 'FORBIDDEN');
      await expectTrpcError(callerFor(t, who).profile.edit({ setId: set.id, expectedVersion: 1, fields: uniqueRequisites() }), 'FORBIDDEN');
      await expectTrpcError(callerFor(t, who).profile.erase({ setId: set.id, reason: 'request' }), 'FORBIDDEN');
    }
    await expectTrpcError(callerFor(t, agent).profile.erase({ setId: set.id, reason: 'request' }), 'FORBIDDEN');
    await expectTrpcError(callerFor(t, foreignManager).profile.reveal({ setId: set.id }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND');
    await expectTrpcError(callerFor(t, foreignManager).profile.edit({ setId: set.id, expectedVersion: 1, fields: uniqueRequisites() }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND');
    await expectTrpcError(callerFor(t, otherAgent).profile.reveal({ setId: set.id }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND');
    expect(await callerFor(t, foreignManager).profile.list({ setId: set.id })).toEqual([]);
    expect(await callerFor(t, otherAgent).profile.list({ setId: set.id })).toEqual([]);
    expect(await profileCounts()).toEqual(before);
    // a PIN manager names the tenant; a tenant role cannot name another
    await expectTrpcError(callerFor(t, pin).profile.create({ fields: uniqueRequisites() }), 'FORBIDDEN', 'PROFILE_FORBIDDEN');
    await expectTrpcError(callerFor(t, manager).profile.create({ tenantId: OTHER, fields: uniqueRequisites() }), 'FORBIDDEN', 'PROFILE_FORBIDDEN');
    const pinSet = await callerFor(t, pin).profile.create({ tenantId: TENANT, fields: uniqueRequisites() });
    expect((await callerFor(t, manager).profile.list({ setId: pinSet.id }))[0]?.tenantId).toBe(TENANT);
    expect(await profileCounts()).toMatchObject({ sets: before.sets + 1, reads: before.reads });
  });

  it('bad input is a typed 400 with field errors that do not echo the value, and writes nothing', async () => {
    const fields = { ...uniqueRequisites(), inn: '123456789012', phone: '+1 555 0100 999' };
    const before = await profileCounts();
    const res = await httpCall(t, agent, 'profile.create', { fields }, 'mutation');
    expect(res.status).toBe(400);
    expect(res.error?.domainCode).toBe('VALIDATION_ERROR');
    const body = JSON.stringify(res.body);
    expect(body).toContain('fields.inn');
    expect(body).not.toContain('123456789012');
    expect(body).not.toContain(fields.fullName);
    for (const input of [{}, { fields: {} }, { fields: { ...uniqueRequisites(), extra: 1 } }, { fields: uniqueRequisites(), tenantId: 'x' }]) {
      expect((await httpCall(t, agent, 'profile.create', input, 'mutation')).status).toBe(400);
    }
    expect((await httpCall(t, manager, 'profile.reveal', { setId: 'nope' }, 'mutation')).status).toBe(400);
    expect((await httpCall(t, manager, 'profile.erase', { setId: randomUUID(), reason: '' }, 'mutation')).status).toBe(400);
    expect((await httpCall(t, manager, 'profile.reveal', { setId: randomUUID() }, 'mutation')).status).toBe(404);
    expect(await profileCounts()).toEqual(before);
  });
});

describe('crm references the set (id + version only)', () => {
  it('booking.create checks the set through profile: unknown, foreign, wrong version → CRM_BOOKING_REQUISITE_SET_NOT_FOUND, nothing written', async () => {
    const foreign = await callerFor(t, foreignManager).profile.create({ fields: uniqueRequisites() });
    const own = await callerFor(t, agent).profile.create({ fields: uniqueRequisites() });
    const [before] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.bookings`;
    for (const requisites of [{ setId: randomUUID(), version: 1 }, { setId: foreign.id, version: 1 }, { setId: own.id, version: 2 }]) {
      await expectTrpcError(bookWith(requisites), 'NOT_FOUND', 'CRM_BOOKING_REQUISITE_SET_NOT_FOUND');
    }
    const [after] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.bookings`;
    expect(after!.n).toBe(before!.n);
  });

  it('the booking stores the id and version; booking-created carries the id only', async () => {
    const fields = uniqueRequisites();
    const set = await callerFor(t, agent).profile.create({ fields });
    const booking = await bookWith({ setId: set.id, version: 1 });
    expect(await bookingRow(t, booking.id)).toMatchObject({ requisiteSetId: set.id, requisiteSetVersion: 1 });
    const [created] = await outboxOf(t, booking.id);
    expect((created!.payload as { payload: { requisiteSetId?: string } }).payload.requisiteSetId).toBe(set.id);
    const text = JSON.stringify(created);
    for (const [k, v] of Object.entries(fields)) expect(text, k).not.toContain(v);
  });

  it('a paid booking needs requisites before upload-contract (CRM_BOOKING_REQUISITES_REQUIRED), given at create or with the contract', async () => {
    const bare = await bookWith(undefined, paidProgram);
    await expectTrpcError(callerFor(t, manager).booking.uploadContract({ bookingId: bare.id, document: 'c.pdf' }), 'PRECONDITION_FAILED', 'CRM_BOOKING_REQUISITES_REQUIRED');
    expect(await bookingRow(t, bare.id)).toMatchObject({ status: 'Reserved', version: 1 });
    await expectTrpcError(
      callerFor(t, manager).booking.uploadContract({ bookingId: bare.id, document: 'c.pdf', requisites: { setId: randomUUID(), version: 1 } }),
      'NOT_FOUND', 'CRM_BOOKING_REQUISITE_SET_NOT_FOUND',
    );
    const set = await callerFor(t, manager).profile.create({ fields: uniqueRequisites() });
    const awaiting = await callerFor(t, manager).booking.uploadContract({ bookingId: bare.id, document: 'c.pdf', requisites: { setId: set.id, version: 1 } });
    expect(awaiting).toMatchObject({ status: 'AwaitingPayment', requisiteSetId: set.id, requisiteSetVersion: 1 });
    // the free program needs none
    const free = await bookWith(undefined);
    expect((await callerFor(t, agent).booking.confirm({ bookingId: free.id })).status).toBe('Booked');
  });
});

describe('erasure', () => {
  it('refused while an active booking references the set; after the booking closes: fields wiped, id and erasure record kept', async () => {
    const fields = uniqueRequisites();
    const set = await callerFor(t, agent).profile.create({ fields });
    await callerFor(t, manager).profile.edit({ setId: set.id, expectedVersion: 1, fields: uniqueRequisites() });
    const booking = await bookWith({ setId: set.id, version: 1 });
    const before = await profileCounts();
    await expectTrpcError(callerFor(t, manager).profile.erase({ setId: set.id, reason: 'subject request' }), 'PRECONDITION_FAILED', 'PROFILE_REQUISITE_SET_IN_USE');
    expect(await profileCounts()).toEqual(before);

    await callerFor(t, manager).booking.cancel({ bookingId: booking.id, reason: 'buyer left' });
    const erased = await callerFor(t, manager).profile.erase({ setId: set.id, reason: 'subject request' });
    expect(erased.id).toBe(set.id);
    const versions = await t.database.sql<{ ciphertext: string | null; key_id: string | null }[]>`SELECT ciphertext, key_id FROM profile.requisite_set_versions WHERE set_id = ${set.id}`;
    expect(versions).toEqual([{ ciphertext: null, key_id: null }, { ciphertext: null, key_id: null }]);
    const [record] = await t.database.sql`SELECT erased_by, reason FROM profile.requisite_erasures WHERE set_id = ${set.id}`;
    expect(record).toEqual({ erased_by: manager.userId, reason: 'subject request' });
    expect(await callerFor(t, manager).profile.list({ setId: set.id })).toMatchObject([{ id: set.id, erased: true, masked: null }]);
    await expectTrpcError(callerFor(t, manager).profile.reveal({ setId: set.id }), 'PRECONDITION_FAILED', 'PROFILE_REQUISITE_SET_ERASED');
    await expectTrpcError(callerFor(t, manager).profile.erase({ setId: set.id, reason: 'again' }), 'PRECONDITION_FAILED', 'PROFILE_REQUISITE_SET_ERASED');
    await expectTrpcError(callerFor(t, manager).profile.edit({ setId: set.id, expectedVersion: 2, fields: uniqueRequisites() }), 'PRECONDITION_FAILED', 'PROFILE_REQUISITE_SET_ERASED');
    // the closed booking still references the id; a new booking cannot use an erased set
    expect(await bookingRow(t, booking.id)).toMatchObject({ requisiteSetId: set.id });
    await expectTrpcError(bookWith({ setId: set.id, version: 1 }), 'PRECONDITION_FAILED', 'CRM_BOOKING_REQUISITE_SET_ERASED');
  });

  it('an erasure and a booking of the same set do not interleave: the booking waits (FOR SHARE) or the erasure sees it', async () => {
    for (let i = 0; i < 5; i++) {
      const set = await callerFor(t, agent).profile.create({ fields: uniqueRequisites() });
      const [b, e] = await Promise.allSettled([
        bookWith({ setId: set.id, version: 1 }),
        callerFor(t, manager).profile.erase({ setId: set.id, reason: 'race' }),
      ]);
      // never both: an active booking of an erased set
      expect(b.status === 'fulfilled' && e.status === 'fulfilled', `round ${i}`).toBe(false);
      expect(b.status === 'rejected' && e.status === 'rejected', `round ${i}`).toBe(false);
    }
  });
});
