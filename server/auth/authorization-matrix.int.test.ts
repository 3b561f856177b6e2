import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { createContextFor } from '../trpc/context';
import { appRouter, createCaller } from '../main/app-router';
import { isAppError } from '../platform/errors';
import { bookingPrograms, bookings, deals } from '../crm/schema';
import { COMMAND_ROLES } from '../crm/permissions';
import { PROFILE_ROLES } from '../profile/permissions';
import { seedRequisiteSet, uniqueRequisites } from '../../test/fixtures/profile.fixtures';
import type { Actor, Role } from './actor';
import { ALL_ROLES, insertTenant, insertTenantWorld, insertUser, TEST_PASSWORD, type TenantWorld } from '../../test/fixtures/auth.fixtures';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { dealChats } from '../messenger/schema';
import { POSTING_ROLES } from '../messenger/queries';
import { notifications } from '../notifications/schema';
import { accruals } from '../rewards/schema';

/**
 * Authorization matrix: every procedure of auth, chessboard, booking and deal (and ops.bookingTimeline)
 * × every role (and an anonymous caller) × a resource of the caller's own tenant and of a foreign one.
 * Expected: anonymous → UNAUTHORIZED (except the public sign-in/sign-out); a role the procedure does not
 * allow → FORBIDDEN (role gate in the middleware); a foreign tenant's resource → NOT_FOUND for
 * tenant-scoped roles (a list simply does not contain it); pin_manager and ops are cross-tenant. The
 * investor has no tenant: every deal of the own tenant here is its deal (crm.deals.investor_id), so its
 * "own" is its deals (and the chessboard of their developer) and "foreign" another developer's deals.
 */

type Caller = ReturnType<typeof createCaller>;
type Tenant = 'own' | 'foreign';
type Outcome = 'ok' | 'visible' | 'hidden' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND';

interface Fixture {
  world: TenantWorld;
  tenantId: string;
  /** ids created for this call */
  ids: Record<string, string>;
}

interface Case {
  path: string;
  /** null = any signed-in role; 'public' = also anonymous */
  roles: readonly Role[] | null | 'public';
  /** a list whose result is checked for the fixture row instead of NOT_FOUND */
  list?: (result: unknown, fx: Fixture) => boolean;
  /** tenant-independent (no resource of a tenant involved) */
  global?: boolean;
  setup?: (tenantId: string, actor: Actor | null) => Promise<Record<string, string>>;
  call: (caller: Caller, fx: Fixture) => Promise<unknown>;
}

const CROSS_TENANT: ReadonlySet<Role> = new Set(['pin_manager', 'ops']);
/** rows addressed to the caller by user id: an investor (no tenant) sees its own wherever the developer */
const ADDRESSED_TO_THE_CALLER: ReadonlySet<string> = new Set(['notifications.list', 'notifications.lines', 'notifications.markRead']);
/** the developers' people are not an investor's to look up (only PIN staff and itself) */
const INVESTOR_SEES_NO_ONE: ReadonlySet<string> = new Set(['auth.userNames']);
const DENIALS = new Set(['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND']);

let t: TestContext;
const worlds = {} as Record<Tenant, TenantWorld>;
const actors = {} as Record<Role, Actor & { email: string }>;
const otherUsers = {} as Record<Tenant, string>;

beforeAll(async () => {
  t = await createTestContext();
  const db = t.database.db;
  const tenantA = await insertTenant(db, 'Own tenant');
  const tenantB = await insertTenant(db, 'Foreign tenant');
  worlds.own = await insertTenantWorld(db, tenantA);
  worlds.foreign = await insertTenantWorld(db, tenantB);
  for (const role of ALL_ROLES) {
    const u = await insertUser(db, role, tenantA);
    actors[role] = { ...u.actor, email: u.email };
  }
  // the investor's deal with the own developer: its chessboard reads (choosing a flat) reach that developer's projects
  await insertDeal(tenantA, 'Application');
  otherUsers.own = (await insertUser(db, 'viewer', tenantA)).id;
  otherUsers.foreign = (await insertUser(db, 'viewer', tenantB)).id;
});
afterAll(async () => {
  await t?.close();
});

// ---- crm fixtures (rows of the crm schema, as the saga would leave them) -------------------------

type BookingState = 'reserved-free' | 'reserved-paid' | 'awaiting-contract' | 'awaiting-receipt' | 'booked';

/** The own tenant's deals are the investor's deals. */
const investorOf = (tenantId: string) => (tenantId === worlds.own.tenantId ? actors.investor.userId : null);

async function insertDeal(tenantId: string, status: 'Application' | 'Booking' = 'Booking'): Promise<string> {
  const id = randomUUID();
  await t.database.db.insert(deals).values({ id, tenantId, title: `Deal ${id.slice(0, 4)}`, status, investorId: investorOf(tenantId) });
  return id;
}

async function insertProgram(tenantId: string, isPaid: boolean): Promise<string> {
  const id = randomUUID();
  await t.database.db.insert(bookingPrograms).values({ id, tenantId, name: isPaid ? 'Paid' : 'Free', isPaid, reserveDurationMinutes: 60, bookingDurationHours: 48 });
  return id;
}

async function insertBooking(tenantId: string, state: BookingState, createdBy: string | null): Promise<Record<string, string>> {
  const now = Date.now();
  const paid = state !== 'reserved-free' && state !== 'booked';
  const dealId = await insertDeal(tenantId);
  const programId = await insertProgram(tenantId, paid);
  const id = randomUUID();
  const base = {
    id, tenantId, dealId, programId, propertyObjectId: randomUUID(), createdBy,
    reserveExpiresAt: new Date(now + 3600_000),
    // a paid booking carries a requisite set reference (upload-contract needs one)
    ...(paid ? { requisiteSetId: randomUUID(), requisiteSetVersion: 1 } : {}),
  };
  const byState = {
    'reserved-free': { status: 'Reserved', paymentStatus: 'NotRequired' },
    'reserved-paid': { status: 'Reserved', paymentStatus: 'Pending' },
    'awaiting-contract': { status: 'AwaitingPayment', paymentStatus: 'ContractUploaded', contractDocument: 'c.pdf' },
    'awaiting-receipt': { status: 'AwaitingPayment', paymentStatus: 'ReceiptUploaded', contractDocument: 'c.pdf', receiptDocument: 'r.pdf' },
    booked: { status: 'Booked', paymentStatus: 'NotRequired', bookedAt: new Date(now - 3600_000), bookingExpiresAt: new Date(now + 47 * 3600_000) },
  } as const;
  await t.database.db.insert(bookings).values({ ...base, ...byState[state] });
  return { bookingId: id, dealId, programId };
}

/** A deal chat as the messenger consumer leaves it (opened by a booking event that named the caller as the deal's agent). */
async function insertChat(tenantId: string, agentId: string | null): Promise<Record<string, string>> {
  const dealId = randomUUID();
  await t.database.db.insert(dealChats).values({ dealId, tenantId, agentId, investorId: investorOf(tenantId) });
  return { dealId };
}

/** A notification addressed to the caller (a booking event of `tenantId` the caller created). */
async function insertNotificationFor(tenantId: string, actor: Actor | null): Promise<Record<string, string>> {
  const userId = actor?.userId ?? randomUUID();
  const [row] = await t.database.db.insert(notifications).values({
    messageId: randomUUID(), recipient: `user:${userId}`, recipientUserId: userId, tenantId, type: 'BookingCreated',
    bookingId: randomUUID(), dealId: randomUUID(), occurredAt: new Date(),
  }).returning({ id: notifications.id });
  return { notificationId: String(row!.id) };
}

/** A reward accrual of `tenantId` (the caller as its agent when it is an agent), as rewards' consumer writes one. */
async function insertAccrual(tenantId: string, actor: Actor | null): Promise<Record<string, string>> {
  const bookingId = randomUUID();
  await t.database.db.insert(accruals).values({
    bookingId, tenantId, dealId: randomUUID(), propertyObjectId: randomUUID(), agentId: actor?.role === 'agent' ? actor.userId : randomUUID(),
    amount: 1000, status: 'accrued', messageId: randomUUID(), paidAt: new Date(),
  });
  return { bookingId };
}

const bookingSetup = (state: BookingState) => (tenantId: string, actor: Actor | null) => insertBooking(tenantId, state, actor?.userId ?? null);

/** A requisite set of `tenantId` created by the caller (an agent sees the sets it created). */
async function requisiteSetSetup(tenantId: string, actor: Actor | null): Promise<Record<string, string>> {
  const creator: Actor = { userId: actor?.userId ?? randomUUID(), role: 'pin_manager', tenantId: null };
  const set = await seedRequisiteSet(t, creator, undefined, tenantId);
  return { setId: set.id };
}

/** A set of `tenantId` that a PIN manager revealed once: the reveal log has a row of it. */
async function revealedSetSetup(tenantId: string): Promise<Record<string, string>> {
  const reader: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };
  const { setId } = await requisiteSetSetup(tenantId, reader);
  await createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, reader)).profile.reveal({ setId: setId!, reason: 'authorization matrix' });
  return { setId: setId! };
}

// ---- the cases -----------------------------------------------------------------------------------

const cases: Case[] = [
  // notifications (#20): every signed-in user has a notification centre; what it shows is addressed to
  // the user in the user's tenant (cross-tenant roles: wherever they are addressed)
  {
    path: 'notifications.list', roles: null, setup: insertNotificationFor,
    list: (r, fx) => (r as { items: { id: number }[] }).items.some((n) => String(n.id) === fx.ids.notificationId),
    call: (c) => c.notifications.list({ limit: 100 }),
  },
  {
    path: 'notifications.lines', roles: null, setup: insertNotificationFor,
    list: (r, fx) => (r as { items: { id: number }[] }).items.some((n) => String(n.id) === fx.ids.notificationId),
    call: (c) => c.notifications.lines({ limit: 100 }),
  },
  { path: 'notifications.unreadCount', roles: null, global: true, call: (c) => c.notifications.unreadCount() },
  {
    path: 'notifications.markRead', roles: null, setup: insertNotificationFor,
    // a notification the caller cannot see is not marked (it looks missing)
    list: (r) => (r as { marked: number }).marked === 1,
    call: (c, fx) => c.notifications.markRead({ ids: [Number(fx.ids.notificationId)] }),
  },
  { path: 'notifications.markAllRead', roles: null, global: true, call: (c) => c.notifications.markAllRead() },
  // auth
  {
    path: 'auth.signIn', roles: 'public', global: true,
    call: (c, fx) => c.auth.signIn({ email: fx.ids.email, password: TEST_PASSWORD }),
  },
  { path: 'auth.signOut', roles: 'public', global: true, call: (c) => c.auth.signOut() },
  { path: 'auth.me', roles: null, global: true, call: (c) => c.auth.me() },
  {
    path: 'auth.userNames', roles: null,
    list: (r, fx) => Object.keys(r as Record<string, string>).includes(fx.ids.userId),
    setup: async (tenantId) => ({ userId: tenantId === worlds.own.tenantId ? otherUsers.own : otherUsers.foreign }),
    call: (c, fx) => c.auth.userNames({ ids: [fx.ids.userId] }),
  },
  // chessboard
  {
    path: 'chessboard.projects', roles: null,
    list: (r, fx) => (r as { id: string }[]).some((p) => p.id === fx.world.projectId),
    call: (c) => c.chessboard.projects(),
  },
  { path: 'chessboard.buildings', roles: null, call: (c, fx) => c.chessboard.buildings({ projectId: fx.world.projectId }) },
  { path: 'chessboard.grid', roles: null, call: (c, fx) => c.chessboard.grid({ buildingId: fx.world.buildingId }) },
  { path: 'chessboard.object', roles: null, call: (c, fx) => c.chessboard.object({ propertyObjectId: fx.world.objectIds.reserved }) },
  {
    path: 'chessboard.objectLabels', roles: null,
    list: (r, fx) => (r as { id: string }[]).some((o) => o.id === fx.world.objectIds.free),
    call: (c, fx) => c.chessboard.objectLabels({ ids: [fx.world.objectIds.free] }),
  },
  {
    path: 'chessboard.releaseHold', roles: ['ops', 'pin_manager'],
    // a fresh held object per call: a release frees it
    setup: async (tenantId) => ({ objectId: (await insertTenantWorld(t.database.db, tenantId)).objectIds.reserved }),
    call: (c, fx) => c.chessboard.releaseHold({ propertyObjectId: fx.ids.objectId, reason: 'authorization matrix' }),
  },
  // catalog actions (#19): developer manager and PIN manager; a fresh world per call (they hide or delete)
  {
    path: 'chessboard.setObjectHidden', roles: ['developer_manager', 'pin_manager'],
    setup: async (tenantId) => ({ objectId: (await insertTenantWorld(t.database.db, tenantId)).objectIds.free }),
    call: (c, fx) => c.chessboard.setObjectHidden({ propertyObjectId: fx.ids.objectId, hidden: true, reason: 'authorization matrix' }),
  },
  {
    path: 'chessboard.withdrawObject', roles: ['developer_manager', 'pin_manager'],
    setup: async (tenantId) => ({ objectId: (await insertTenantWorld(t.database.db, tenantId)).objectIds.free }),
    call: (c, fx) => c.chessboard.withdrawObject({ propertyObjectId: fx.ids.objectId, reason: 'authorization matrix' }),
  },
  {
    path: 'chessboard.withdrawProject', roles: ['developer_manager', 'pin_manager'],
    setup: async (tenantId) => {
      const world = await insertTenantWorld(t.database.db, tenantId);
      // a project with a held object is refused (CONFLICT): free the holds so role and tenant decide
      await t.database.sql`UPDATE chessboard.property_objects SET status = 'Free', reserved_until = NULL, booked_until = NULL, hold_deal_id = NULL, hold_booking_id = NULL WHERE project_id = ${world.projectId}`;
      return { projectId: world.projectId };
    },
    call: (c, fx) => c.chessboard.withdrawProject({ projectId: fx.ids.projectId, reason: 'authorization matrix' }),
  },
  // booking commands
  {
    path: 'booking.create', roles: COMMAND_ROLES['booking.create'],
    setup: async (tenantId) => ({
      dealId: await insertDeal(tenantId, 'Application'), programId: await insertProgram(tenantId, false),
      objectId: await projectedObjectOf(t.database, tenantId),
    }),
    call: (c, fx) => c.booking.create({ dealId: fx.ids.dealId, programId: fx.ids.programId, propertyObjectId: fx.ids.objectId }),
  },
  {
    path: 'booking.uploadContract', roles: COMMAND_ROLES['booking.uploadContract'], setup: bookingSetup('reserved-paid'),
    call: (c, fx) => c.booking.uploadContract({ bookingId: fx.ids.bookingId, document: 'contract.pdf' }),
  },
  {
    path: 'booking.uploadReceipt', roles: COMMAND_ROLES['booking.uploadReceipt'], setup: bookingSetup('awaiting-contract'),
    call: (c, fx) => c.booking.uploadReceipt({ bookingId: fx.ids.bookingId, document: 'receipt.pdf' }),
  },
  {
    path: 'booking.confirm', roles: COMMAND_ROLES['booking.confirm'], setup: bookingSetup('reserved-free'),
    call: (c, fx) => c.booking.confirm({ bookingId: fx.ids.bookingId }),
  },
  {
    path: 'booking.confirmPayment', roles: COMMAND_ROLES['booking.confirmPayment'], setup: bookingSetup('awaiting-receipt'),
    call: (c, fx) => c.booking.confirmPayment({ bookingId: fx.ids.bookingId }),
  },
  {
    path: 'booking.extend', roles: COMMAND_ROLES['booking.extend'], setup: bookingSetup('booked'),
    call: (c, fx) => c.booking.extend({ bookingId: fx.ids.bookingId, idempotencyKey: randomUUID() }),
  },
  {
    // the booking is created by the caller: an agent may cancel its own bookings
    path: 'booking.cancel', roles: COMMAND_ROLES['booking.cancel'], setup: bookingSetup('reserved-free'),
    call: (c, fx) => c.booking.cancel({ bookingId: fx.ids.bookingId, reason: 'authorization matrix' }),
  },
  {
    path: 'booking.startSale', roles: COMMAND_ROLES['booking.startSale'], setup: bookingSetup('booked'),
    call: (c, fx) => c.booking.startSale({ bookingId: fx.ids.bookingId }),
  },
  {
    path: 'booking.setProgramReward', roles: COMMAND_ROLES['program.setReward'],
    setup: async (tenantId) => ({ programId: await insertProgram(tenantId, true) }),
    call: (c, fx) => c.booking.setProgramReward({ programId: fx.ids.programId, reward: { kind: 'percent', value: 2 } }),
  },
  // booking queries
  { path: 'booking.byId', roles: null, setup: bookingSetup('reserved-free'), call: (c, fx) => c.booking.byId({ bookingId: fx.ids.bookingId }) },
  {
    path: 'booking.list', roles: null, setup: bookingSetup('reserved-free'),
    list: (r, fx) => (r as { items: { id: string }[] }).items.some((b) => b.id === fx.ids.bookingId),
    call: (c, fx) => c.booking.list({ dealId: fx.ids.dealId }),
  },
  {
    path: 'booking.programs', roles: null,
    setup: async (tenantId) => ({ programId: await insertProgram(tenantId, true) }),
    list: (r, fx) => (r as { id: string }[]).some((p) => p.id === fx.ids.programId),
    call: (c) => c.booking.programs(),
  },
  // deal
  {
    path: 'deal.cancel', roles: COMMAND_ROLES['deal.cancel'],
    setup: async (tenantId) => ({ dealId: await insertDeal(tenantId, 'Application') }),
    call: (c, fx) => c.deal.cancel({ dealId: fx.ids.dealId, reason: 'authorization matrix' }),
  },
  {
    path: 'deal.list', roles: null,
    setup: async (tenantId) => ({ dealId: await insertDeal(tenantId) }),
    list: (r, fx) => (r as { items: { id: string }[] }).items.some((d) => d.id === fx.ids.dealId),
    call: (c, fx) => c.deal.list({ search: fx.ids.dealId }),
  },
  {
    path: 'deal.byId', roles: null,
    setup: async (tenantId) => ({ dealId: await insertDeal(tenantId) }),
    call: (c, fx) => c.deal.byId({ dealId: fx.ids.dealId }),
  },
  // profile (#23): requisite sets — personal data; viewer and ops never; an agent works with the sets it created
  {
    path: 'profile.create', roles: PROFILE_ROLES['profile.create'], global: true,
    call: (c, fx) => c.profile.create({ tenantId: fx.tenantId, fields: uniqueRequisites() }),
  },
  {
    path: 'profile.edit', roles: PROFILE_ROLES['profile.edit'], setup: requisiteSetSetup,
    call: (c, fx) => c.profile.edit({ setId: fx.ids.setId, expectedVersion: 1, fields: uniqueRequisites() }),
  },
  {
    path: 'profile.list', roles: PROFILE_ROLES['profile.list'], setup: requisiteSetSetup,
    list: (r, fx) => (r as { id: string }[]).some((s) => s.id === fx.ids.setId),
    call: (c, fx) => c.profile.list({ setId: fx.ids.setId }),
  },
  {
    path: 'profile.reveal', roles: PROFILE_ROLES['profile.reveal'], setup: requisiteSetSetup,
    call: (c, fx) => c.profile.reveal({ reason: 'contract check', setId: fx.ids.setId }),
  },
  {
    path: 'profile.reveals', roles: PROFILE_ROLES['profile.reveals'], setup: revealedSetSetup,
    list: (r, fx) => (r as { setId: string }[]).some((row) => row.setId === fx.ids.setId),
    call: (c, fx) => c.profile.reveals({ setId: fx.ids.setId }),
  },
  {
    path: 'profile.erase', roles: PROFILE_ROLES['profile.erase'], setup: requisiteSetSetup,
    call: (c, fx) => c.profile.erase({ setId: fx.ids.setId, reason: 'authorization matrix' }),
  },
  // messenger (issue 20): anyone of the tenant reads a deal chat; its participants post (an agent: its own deal)
  {
    path: 'messenger.chat', roles: null,
    setup: (tenantId) => insertChat(tenantId, null),
    call: (c, fx) => c.messenger.chat({ dealId: fx.ids.dealId }),
  },
  {
    path: 'messenger.post', roles: POSTING_ROLES,
    setup: (tenantId, actor) => insertChat(tenantId, actor?.role === 'agent' ? actor.userId : null),
    call: (c, fx) => c.messenger.post({ dealId: fx.ids.dealId, text: 'authorization matrix' }),
  },
  // rewards: an agent its own accruals; a developer manager its tenant's totals per agent
  {
    path: 'rewards.mine', roles: ['agent'], setup: insertAccrual,
    list: (r, fx) => (r as { items: { bookingId: string }[] }).items.some((a) => a.bookingId === fx.ids.bookingId),
    call: (c) => c.rewards.mine({ pageSize: 100 }),
  },
  {
    path: 'rewards.totals', roles: ['developer_manager', 'pin_manager'], setup: insertAccrual,
    list: (r, fx) => (r as { tenantId: string }[]).some((row) => row.tenantId === fx.tenantId),
    call: (c) => c.rewards.totals(),
  },
  // ops (the saga timeline of this issue)
  {
    path: 'ops.bookingTimeline', roles: null, setup: bookingSetup('booked'),
    call: (c, fx) => c.ops.bookingTimeline({ bookingId: fx.ids.bookingId }),
  },
];

function expected(c: Case, role: Role | null, tenant: Tenant): Outcome {
  if (c.roles === 'public') return 'ok';
  if (role === null) return 'UNAUTHORIZED';
  if (c.roles !== null && !c.roles.includes(role)) return 'FORBIDDEN';
  if (role === 'investor' && INVESTOR_SEES_NO_ONE.has(c.path)) return 'hidden';
  const sees = tenant === 'own' || CROSS_TENANT.has(role) || c.global || (role === 'investor' && ADDRESSED_TO_THE_CALLER.has(c.path));
  if (c.list) return sees ? 'visible' : 'hidden';
  return sees ? 'ok' : 'NOT_FOUND';
}

async function run(c: Case, role: Role | null, tenant: Tenant): Promise<Outcome> {
  const actor = role ? actors[role] : null;
  const world = worlds[tenant];
  const ids = (await c.setup?.(world.tenantId, actor)) ?? {};
  if (c.path === 'auth.signIn') ids.email = actor?.email ?? actors.viewer.email;
  const caller = createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, actor, { ip: `10.20.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`, setCookie: () => {} }));
  try {
    const result = await c.call(caller, { world, tenantId: world.tenantId, ids });
    return c.list ? (c.list(result, { world, tenantId: world.tenantId, ids }) ? 'visible' : 'hidden') : 'ok';
  } catch (e) {
    if (e instanceof TRPCError && DENIALS.has(e.code)) return e.code as Outcome;
    const domain = e instanceof TRPCError && isAppError(e.cause) ? e.cause.code : '';
    throw new Error(`${c.path} as ${role ?? 'anonymous'} (${tenant}) failed unexpectedly: ${(e as Error).message} ${domain}`);
  }
}

describe('authorization matrix', () => {
  it('covers every procedure of auth, chessboard, booking, deal, profile, messenger, notifications and rewards', () => {
    const procedures = Object.keys((appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures)
      .filter((p) => /^(auth|chessboard|booking|deal|profile|messenger|notifications|rewards)\./.test(p));
    expect(cases.map((c) => c.path).filter((p) => !p.startsWith('ops.')).sort()).toEqual(procedures.sort());
  });

  for (const c of cases) {
    describe(c.path, () => {
      it('anonymous caller', async () => {
        expect(await run(c, null, 'own')).toBe(expected(c, null, 'own'));
      });
      for (const role of ALL_ROLES) {
        for (const tenant of (c.global ? ['own'] : ['own', 'foreign']) as Tenant[]) {
          it(`${role} × ${tenant} tenant → ${expected(c, role, tenant)}`, async () => {
            expect(await run(c, role, tenant)).toBe(expected(c, role, tenant));
          });
        }
      }
    });
  }

  it('denials come from the role gate before any input is read (a viewer forging booking.confirm gets FORBIDDEN, not a validation error)', async () => {
    const caller = createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, actors.viewer));
    await expect(caller.booking.confirm({ bookingId: 'not-a-uuid' } as never)).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
