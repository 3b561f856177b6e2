import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../auth/actor';
import { insertUser } from '../../test/fixtures/auth.fixtures';
import { insertObject, insertWorld, type World } from '../../test/fixtures/ops-dashboard.fixtures';
import { seedRequisiteSet, uniqueRequisites } from '../../test/fixtures/profile.fixtures';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { createBookingCommand } from './commands/create-booking';
import { actor, callerFor, insertProgram } from '../../test/fixtures/crm.fixtures';
import { commandContext } from '../platform/command-context';

/**
 * booking.list finds a booking by the names people use — the deal's title or number, the deal's agent,
 * the buyer's surname (matched in profile, only among the sets the viewer may use) — within the viewer's
 * tenant; deal.list says which flat a deal holds and who its buyer is (masked).
 */
let t: TestContext;
let w: World;
let other: World;
let manager: Actor;
let agentSidorov: Actor;
let otherAgent: Actor;
let viewer: Actor;
let foreignManager: Actor;
const pin = actor('pin_manager', null);
const booked: Record<string, { id: string; dealId: string }> = {};
let flat: { id: string; number: string };
let buyerSurname: string;

async function deal(world: World, title: string, agentId: string | null) {
  const id = randomUUID();
  await t.database.sql`INSERT INTO crm.deals (id, tenant_id, title, agent_id, status) VALUES (${id}, ${world.tenantId}, ${title}, ${agentId}, 'Application')`;
  return id;
}

async function book(world: World, dealId: string, objectId: string, requisites?: { setId: string; version: number }) {
  const program = await insertProgram(t, world.tenantId);
  return t.database.db.transaction((tx) => createBookingCommand(tx, { dealId, propertyObjectId: objectId, programId: program.id, ...(requisites ? { requisites } : {}) }, commandContext(pin, randomUUID())));
}

beforeAll(async () => {
  t = await createTestContext();
  w = await insertWorld(t.database, 'Север');
  other = await insertWorld(t.database, 'Юг');
  manager = (await insertUser(t.database.db, 'developer_manager', w.tenantId)).actor;
  agentSidorov = (await insertUser(t.database.db, 'agent', w.tenantId)).actor;
  otherAgent = (await insertUser(t.database.db, 'agent', w.tenantId)).actor;
  viewer = (await insertUser(t.database.db, 'viewer', w.tenantId)).actor;
  foreignManager = (await insertUser(t.database.db, 'developer_manager', other.tenantId)).actor;
  await t.database.sql`UPDATE auth.users SET display_name = 'Агент Сидоров' WHERE id = ${agentSidorov.userId}`;

  flat = await insertObject(t.database, w, { status: 'Free', number: '3012' });
  const fields = uniqueRequisites();
  buyerSurname = fields.fullName.split(' ')[0]!;
  const set = await seedRequisiteSet(t, manager, fields);
  booked.titled = await book(w, await deal(w, 'Сделка №1019', agentSidorov.userId), flat.id, { setId: set.id, version: set.version });
  booked.plain = await book(w, await deal(w, 'Сделка №2044', otherAgent.userId), (await insertObject(t.database, w, { status: 'Free' })).id);
  // the same title in another tenant, by an agent of that name there too
  booked.foreign = await book(other, await deal(other, 'Сделка №1019', null), (await insertObject(t.database, other, { status: 'Free' })).id);
});
afterAll(async () => { await t?.close(); });

const found = async (who: Actor, search: string) => (await callerFor(t, who).booking.list({ search })).items.map((b) => b.id).sort();

describe('booking.list by the names people use', () => {
  it('finds a booking by its deal\'s title or number, in the viewer\'s tenant only', async () => {
    expect(await found(viewer, 'Сделка №1019')).toEqual([booked.titled!.id]);
    expect(await found(viewer, '1019')).toEqual([booked.titled!.id]);
    expect(await found(viewer, 'сделка №20')).toEqual([booked.plain!.id]);
    expect(await found(foreignManager, '1019')).toEqual([booked.foreign!.id]);
    expect((await found(pin, 'Сделка №1019'))).toEqual([booked.titled!.id, booked.foreign!.id].sort());
  });

  it('finds the bookings of a deal\'s agent by the agent\'s name, not another tenant\'s', async () => {
    expect(await found(viewer, 'Сидоров')).toEqual([booked.titled!.id]);
    expect(await found(viewer, 'сидоров')).toEqual([booked.titled!.id]);
    expect(await found(foreignManager, 'Сидоров')).toEqual([]);
  });

  it('finds a booking by the buyer\'s surname only for whom may use the set; the flat by "кв. N"', async () => {
    expect(await found(manager, buyerSurname)).toEqual([booked.titled!.id]);
    expect(await found(manager, buyerSurname.toUpperCase())).toEqual([booked.titled!.id]);
    // a part of the surname is no match: the search tells nothing about names it did not get whole
    expect(await found(manager, buyerSurname.slice(0, 4))).toEqual([]);
    // an agent who did not make the set, a viewer, another tenant: the name finds nothing
    expect(await found(otherAgent, buyerSurname)).toEqual([]);
    expect(await found(viewer, buyerSurname)).toEqual([]);
    expect(await found(foreignManager, buyerSurname)).toEqual([]);
    expect(await found(viewer, 'кв. 3012')).toEqual([booked.titled!.id]);
    expect(await found(viewer, '3012')).toEqual([booked.titled!.id]);
  });

  it('deal.list says which flat a deal holds and names its buyer masked, never in full', async () => {
    const list = await callerFor(t, manager).deal.list({ search: 'Сделка №1019' });
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({ heldObjectId: flat.id, heldObjectNumber: '3012' });
    expect(list.items[0]!.buyerName).toMatch(new RegExp(`^${buyerSurname[0]}•+ `));
    expect(JSON.stringify(list)).not.toContain(buyerSurname);
    expect(list.items[0]).not.toHaveProperty('buyerRequisiteSetId');
    // a viewer may not use the set: no buyer, still the flat
    const seen = await callerFor(t, viewer).deal.list({ search: 'Сделка №1019' });
    expect(seen.items[0]).toMatchObject({ heldObjectNumber: '3012', buyerName: null });
    const plain = (await callerFor(t, viewer).deal.list({ search: '2044' })).items[0]!;
    expect(plain.heldObjectNumber).not.toBeNull();
  });
});
