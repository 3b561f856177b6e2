import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, bookingRow, callerFor, expectTrpcError, httpCall, insertDeal, insertProgram, outboxOf } from '../../test/fixtures/crm.fixtures';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { requisiteReadsOf } from './queries';
import { seedRequisiteSet } from '../../test/fixtures/profile.fixtures';
import { uniqueRequisites } from '../../test/fixtures/profile.fixtures';

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
    const raw = storedText(rows[0]!);
    expect(rows[0]!.ciphertext).toMatch(/^v1\./);
    expect(rows[0]!.key_id).toBe('k1');
    for (const [k, v] of Object.entries(fields)) expect(raw, k).not.toContain(v);
    const [setRow] = await t.database.sql<Record<string, unknown>[]>`SELECT * FROM profile.requisite_sets WHERE id = ${set.id}`;
    for (const [k, v] of Object.entries(fields)) expect(storedText(setRow!), k).not.toContain(v);
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
    const revealed = await callerFor(t, manager, correlationId).profile.reveal({ reason: 'contract check', setId: set.id });
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
    expect((await callerFor(t, manager).profile.reveal({ reason: 'contract check', setId: set.id })).fields).toEqual(v2);
    const forBooking = await callerFor(t, manager).profile.reveal({ reason: 'contract check', setId: set.id, bookingId: booking.id });
    expect(forBooking).toMatchObject({ version: 1, currentVersion: 2, bookingId: booking.id, fields: v1 });
    expect((await requisiteReadsOf(t.database.db, set.id))[0]).toMatchObject({ bookingId: booking.id, version: 1 });
    // a booking that does not reference the set
    const bySomeoneElse = await callerFor(t, otherAgent).profile.create({ fields: uniqueRequisites() });
    await expectTrpcError(callerFor(t, manager).profile.reveal({ reason: 'contract check', setId: bySomeoneElse.id, bookingId: booking.id }), 'NOT_FOUND', 'PROFILE_BOOKING_NOT_FOUND');
  });

  it('roles and tenants: viewer and ops never (FORBIDDEN), a foreign tenant and another agent see NOT_FOUND; nothing read is audited', async () => {
    const set = await callerFor(t, agent).profile.create({ fields: uniqueRequisites() });
    const before = await profileCounts();
    for (const who of [viewer, ops]) {
      await expectTrpcError(callerFor(t, who).profile.reveal({ reason: 'contract check', setId: set.id }), 'FORBIDDEN');
      await expectTrpcError(callerFor(t, who).profile.list({}), 'FORBIDDEN');
      await expectTrpcError(callerFor(t, who).profile.create({ fields: uniqueRequisites() }), 'FORBIDDEN');
      await expectTrpcError(callerFor(t, who).profile.edit({ setId: set.id, expectedVersion: 1, fields: uniqueRequisites() }), 'FORBIDDEN');
      await expectTrpcError(callerFor(t, who).profile.erase({ setId: set.id, reason: 'request' }), 'FORBIDDEN');
    }
    await expectTrpcError(callerFor(t, agent).profile.erase({ setId: set.id, reason: 'request' }), 'FORBIDDEN');
    await expectTrpcError(callerFor(t, foreignManager).profile.reveal({ reason: 'contract check', setId: set.id }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND');
    await expectTrpcError(callerFor(t, foreignManager).profile.edit({ setId: set.id, expectedVersion: 1, fields: uniqueRequisites() }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND');
    await expectTrpcError(callerFor(t, otherAgent).profile.reveal({ reason: 'contract check', setId: set.id }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND');
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
    expect((await httpCall(t, manager, 'profile.reveal', { reason: 'contract check', setId: 'nope' }, 'mutation')).status).toBe(400);
    expect((await httpCall(t, manager, 'profile.erase', { setId: randomUUID(), reason: '' }, 'mutation')).status).toBe(400);
    expect((await httpCall(t, manager, 'profile.reveal', { reason: 'contract check', setId: randomUUID() }, 'mutation')).status).toBe(404);
    expect(await profileCounts()).toEqual(before);
  });
});

/** The one rule (its creator, the tenant's managers), at reference time and at reveal time. */
describe('who may use a set', () => {
  const readsOf = async (setId: string) => (await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM profile.requisite_reads WHERE set_id = ${setId}`)[0]!.n;

  it("an agent cannot reference a manager's or another agent's set: the same answer as an unknown id, nothing written, and erasure is not blocked", async () => {
    const managers = await callerFor(t, manager).profile.create({ fields: uniqueRequisites() });
    const otherAgents = await callerFor(t, otherAgent).profile.create({ fields: uniqueRequisites() });
    const [before] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.bookings`;
    const unknown = await expectTrpcError(bookWith({ setId: randomUUID(), version: 1 }), 'NOT_FOUND', 'CRM_BOOKING_REQUISITE_SET_NOT_FOUND') as { message?: string };
    for (const set of [managers, otherAgents]) {
      const refused = await expectTrpcError(bookWith({ setId: set.id, version: 1 }), 'NOT_FOUND', 'CRM_BOOKING_REQUISITE_SET_NOT_FOUND') as { message?: string; cause?: { details?: unknown } };
      expect(refused.message).toBe(unknown.message);
      expect(refused.cause?.details).toEqual({ requisiteSetId: set.id, version: 1 });
    }
    const [after] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.bookings`;
    expect(after!.n).toBe(before!.n);
    // nothing of the agent's holds the sets: both erase
    for (const set of [managers, otherAgents]) expect((await callerFor(t, manager).profile.erase({ setId: set.id, reason: 'subject request' })).id).toBe(set.id);
    // the set's creator, the tenant's developer manager and a PIN manager may reference it
    const agents = await callerFor(t, agent).profile.create({ fields: uniqueRequisites() });
    expect((await bookWith({ setId: agents.id, version: 1 })).requisiteSetId).toBe(agents.id);
    expect((await bookWith({ setId: agents.id, version: 1 }, freeProgram, pin)).requisiteSetId).toBe(agents.id);
    const bare = await bookWith(undefined, paidProgram);
    expect((await callerFor(t, manager).booking.uploadContract({ bookingId: bare.id, document: 'c.pdf', requisites: { setId: agents.id, version: 1 } })).requisiteSetId).toBe(agents.id);
  });

  it('a refused reference does not wait for (nor take) the row lock of a set the caller may not use', async () => {
    const managers = await callerFor(t, manager).profile.create({ fields: uniqueRequisites() });
    const deal = await insertDeal(t, TENANT);
    const objectId = await projectedObjectOf(t.database, TENANT);
    await t.database.sql.begin(async (holder) => {
      await holder`SELECT 1 FROM profile.requisite_sets WHERE id = ${managers.id} FOR UPDATE`;
      const call = callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: objectId, programId: freeProgram.id, requisites: { setId: managers.id, version: 1 } });
      let timer: NodeJS.Timeout | undefined;
      // the lock is held until this transaction ends: a call that queued behind it would never settle in time
      const waited = new Promise<'waited'>((resolve) => { timer = setTimeout(() => resolve('waited'), 5_000); });
      const outcome = await Promise.race([call.then(() => 'ok', (e: { cause?: { code?: string } }) => e.cause?.code), waited]);
      clearTimeout(timer);
      expect(outcome).toBe('CRM_BOOKING_REQUISITE_SET_NOT_FOUND');
    });
  });

  it("reveal: never a set the caller may not use, even through a booking it made; a booking it may not act on is refused", async () => {
    const managers = await callerFor(t, manager).profile.create({ fields: uniqueRequisites() });
    // the agent's paid booking gets the manager's set with the contract (a reference the manager may make)
    const agentsBooking = await bookWith(undefined, paidProgram);
    await callerFor(t, manager).booking.uploadContract({ bookingId: agentsBooking.id, document: 'c.pdf', requisites: { setId: managers.id, version: 1 } });
    const unknown = await expectTrpcError(callerFor(t, agent).profile.reveal({ reason: 'contract check', setId: randomUUID(), bookingId: agentsBooking.id }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND') as { message?: string };
    const refused = await expectTrpcError(callerFor(t, agent).profile.reveal({ reason: 'contract check', setId: managers.id, bookingId: agentsBooking.id }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND') as { message?: string };
    expect(refused.message).toBe(unknown.message);
    await expectTrpcError(callerFor(t, agent).profile.reveal({ reason: 'contract check', setId: managers.id }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND');
    expect(await readsOf(managers.id)).toBe(0);
    // the manager reads it for the booking
    expect((await callerFor(t, manager).profile.reveal({ reason: 'contract check', setId: managers.id, bookingId: agentsBooking.id })).bookingId).toBe(agentsBooking.id);

    // the agent's own set on another agent's booking (the manager attached it): not through that booking
    const agents = await callerFor(t, agent).profile.create({ fields: uniqueRequisites() });
    const othersBooking = await bookWith(undefined, paidProgram, otherAgent);
    await callerFor(t, manager).booking.uploadContract({ bookingId: othersBooking.id, document: 'c.pdf', requisites: { setId: agents.id, version: 1 } });
    await expectTrpcError(callerFor(t, agent).profile.reveal({ reason: 'contract check', setId: agents.id, bookingId: othersBooking.id }), 'NOT_FOUND', 'PROFILE_BOOKING_NOT_FOUND');
    await expectTrpcError(callerFor(t, otherAgent).profile.reveal({ reason: 'contract check', setId: agents.id, bookingId: othersBooking.id }), 'NOT_FOUND', 'PROFILE_REQUISITE_SET_NOT_FOUND');
    expect(await readsOf(agents.id)).toBe(0);
    expect((await callerFor(t, agent).profile.reveal({ reason: 'contract check', setId: agents.id })).id).toBe(agents.id);
  });

  it('a reveal asks for a reason: none or a blank one is a 400 naming it and reads nothing; the reason is stored in the audit row', async () => {
    const set = await callerFor(t, manager).profile.create({ fields: uniqueRequisites() });
    for (const input of [{ setId: set.id }, { setId: set.id, reason: '  ' }, { setId: set.id, reason: 'x'.repeat(301) }]) {
      const res = await httpCall(t, manager, 'profile.reveal', input, 'mutation');
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('reason');
    }
    expect(await readsOf(set.id)).toBe(0);
    await callerFor(t, manager).profile.reveal({ setId: set.id, reason: '  drawing up the contract ' });
    expect((await requisiteReadsOf(t.database.db, set.id))[0]).toMatchObject({ actorId: manager.userId, reason: 'drawing up the contract' });
  });

  it('the reveal log: ops and PIN managers see who read which set, when and why (by set, by user); nobody else; no field in it', async () => {
    const fields = uniqueRequisites();
    const reader = actor('developer_manager', TENANT);
    const set = await seedRequisiteSet(t, reader, fields);
    const other = await seedRequisiteSet(t, reader);
    await callerFor(t, reader).profile.reveal({ setId: set.id, reason: 'contract for the buyer' });
    await callerFor(t, pin).profile.reveal({ setId: set.id, reason: 'complaint check' });
    await callerFor(t, reader).profile.reveal({ setId: other.id, reason: 'another set' });
    for (const who of [ops, pin]) {
      const bySet = await callerFor(t, who).profile.reveals({ setId: set.id });
      expect(bySet.map((r) => [r.actorId, r.reason])).toEqual([[pin.userId, 'complaint check'], [reader.userId, 'contract for the buyer']]);
      expect(bySet[0]).toMatchObject({ setId: set.id, version: 1, tenantId: TENANT, actorRole: 'pin_manager', bookingId: null });
      const byUser = await callerFor(t, who).profile.reveals({ actorId: reader.userId });
      expect(byUser.map((r) => [r.setId, r.reason])).toEqual([[other.id, 'another set'], [set.id, 'contract for the buyer']]);
      expect((await callerFor(t, who).profile.reveals({ actorId: reader.userId, setId: other.id })).map((r) => r.reason)).toEqual(['another set']);
      // pages back by id
      const [newest] = byUser;
      expect((await callerFor(t, who).profile.reveals({ actorId: reader.userId, before: newest!.id })).map((r) => r.setId)).toEqual([set.id]);
      // ids, uuids and times taken out first: a four-digit passport series can occur inside them by chance
      const text = JSON.stringify(await callerFor(t, who).profile.reveals({}))
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
        .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<time>')
        .replace(/"(id|version)":\d+/g, '"$1":<n>');
      expect(text).toContain('<uuid>');
      for (const [k, v] of Object.entries(fields)) expect(text, k).not.toContain(v);
    }
    for (const who of [agent, reader, viewer, foreignManager]) await expectTrpcError(callerFor(t, who).profile.reveals({ setId: set.id }), 'FORBIDDEN');
    expect((await httpCall(t, ops, 'profile.reveals', { setId: 'nope' }, 'query')).status).toBe(400);
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
    await expectTrpcError(callerFor(t, manager).profile.reveal({ reason: 'contract check', setId: set.id }), 'PRECONDITION_FAILED', 'PROFILE_REQUISITE_SET_ERASED');
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

/**
 * A stored row as text, without its ids and timestamps: a 4-digit passport series can occur by chance in a
 * uuid's hex or a timestamp's year, which says nothing about the row holding clear text.
 */
function storedText(row: Record<string, unknown>): string {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  return JSON.stringify(Object.entries(row).filter(([, v]) => !(v instanceof Date) && !(typeof v === 'string' && uuid.test(v))));
}
