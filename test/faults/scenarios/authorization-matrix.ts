import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { expect } from 'vitest';
import type { Actor, Role } from '../../../server/auth/actor';
import { ALL_ROLES, insertTenant, insertTenantWorld, insertUser, TEST_PASSWORD, type TenantWorld } from '../../fixtures/auth.fixtures';
import { COMMAND_ROLES } from '../../../server/crm/permissions';
import { PROFILE_ROLES } from '../../../server/profile/permissions';
import { POSTING_ROLES } from '../../../server/messenger/queries';
import { revealRequisiteSet } from '../../../server/profile/queries';
import { keyringOf } from '../../../server/profile/router';
import { seedRequisiteSet, uniqueRequisites } from '../../fixtures/profile.fixtures';
import { projectedObjectOf } from '../../harness/crm-projection';
import type { TestContext } from '../../harness/harness';
import { createContextFor } from '../../../server/trpc/context';
import { appRouter, createCaller } from '../../../server/main/app-router';
import { figure } from '../helpers/figures';

/**
 * Authorization matrix of EVERY procedure (appRouter._def.procedures: auth, booking, deal, chessboard,
 * catalog, ops incl. the dashboard) × every role and a signed-out caller × a resource of the caller's
 * own tenant and of a foreign one. server/auth/authorization-matrix.int.test.ts checks the expected
 * answer of the first four routers; this one covers all of them and counts LEAKS:
 *  - a signed-out caller that gets anything but UNAUTHORIZED from a non-public procedure;
 *  - a role outside the procedure's roles that gets anything but FORBIDDEN;
 *  - a tenant-scoped role (agent, developer_manager, viewer) whose call on a foreign resource does not
 *    answer NOT_FOUND;
 *  - any answer to a tenant-scoped role that contains an identifier of the foreign tenant (tenant,
 *    project, building, objects, deals, bookings, programs, users, outbox messages) — lists, dashboards
 *    and error details included. (The public catalog reads are excluded: storefront cards are public.)
 */

type Tenant = 'own' | 'foreign';
type Allowed = readonly Role[] | 'signed-in' | 'public';

interface Fx { world: TenantWorld; tenantId: string; ids: Record<string, string> }
interface Case {
  path: string;
  allowed: Allowed;
  /** the input names a resource of the tenant: a tenant-scoped role must get NOT_FOUND for a foreign one */
  byId?: boolean;
  setup?: (t: TestContext, tenantId: string, actor: Actor | null) => Promise<Record<string, string>>;
  input: (fx: Fx) => unknown;
}

const CROSS_TENANT = new Set<Role>(['pin_manager', 'ops']);
/**
 * The investor of the own tenant's deals: every deal the scenario makes in the own tenant is that
 * investor's (crm.deals.investor_id), so for an investor "own" means its deals and "foreign" another
 * developer's deals that are not — the same NOT_FOUND and no-leak rules as a tenant role.
 */
const ownDeals = { tenantId: '', investorId: '' };

async function requisiteSet(t: TestContext, tenantId: string, actor: Actor | null): Promise<Record<string, string>> {
  const creator: Actor = { userId: actor?.userId ?? randomUUID(), role: 'pin_manager', tenantId: null };
  return { setId: (await seedRequisiteSet(t, creator, undefined, tenantId)).id };
}
/** A set of `tenantId` revealed once by a PIN manager (the reveal log has a row of that tenant). */
async function revealOf(t: TestContext, tenantId: string): Promise<Record<string, string>> {
  const reader: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };
  const { setId } = await requisiteSet(t, tenantId, reader);
  await t.database.db.transaction((tx) => revealRequisiteSet(tx, { setId: setId!, reason: 'matrix' }, { actor: reader, keyring: keyringOf(t.env), correlationId: randomUUID(), now: new Date() }));
  return { setId: setId! };
}
/** A deal chat as the messenger consumer leaves it (the caller named as the deal's agent when it is an agent). */
async function dealChat(t: TestContext, tenantId: string, actor: Actor | null): Promise<Record<string, string>> {
  const dealId = randomUUID();
  const investorId = tenantId === ownDeals.tenantId ? ownDeals.investorId : null;
  await t.database.sql`INSERT INTO messenger.deal_chats (deal_id, tenant_id, agent_id, investor_id) VALUES (${dealId}, ${tenantId}, ${actor?.role === 'agent' ? actor.userId : null}, ${investorId})`;
  return { dealId };
}
/** A notification of `tenantId` addressed to the caller (as the consumer writes one for the booking's creator). */
async function notificationFor(t: TestContext, tenantId: string, actor: Actor | null): Promise<Record<string, string>> {
  const userId = actor?.userId ?? randomUUID();
  const [row] = await t.database.sql<{ id: string }[]>`
    INSERT INTO notifications.notifications (message_id, recipient, recipient_user_id, tenant_id, type, booking_id, deal_id, occurred_at)
    VALUES (${randomUUID()}, ${`user:${userId}`}, ${userId}, ${tenantId}, 'BookingCreated', ${randomUUID()}, ${randomUUID()}, now()) RETURNING id::text AS id`;
  return { notificationId: row!.id };
}
/** A reward accrual of `tenantId` (the caller as the deal's agent when it is an agent), as rewards' consumer writes one. */
async function accrualFor(t: TestContext, tenantId: string, actor: Actor | null): Promise<Record<string, string>> {
  const bookingId = randomUUID();
  const agentId = actor?.role === 'agent' ? actor.userId : randomUUID();
  await t.database.sql`INSERT INTO rewards.accruals (booking_id, tenant_id, deal_id, property_object_id, agent_id, amount, status, message_id, paid_at)
    VALUES (${bookingId}, ${tenantId}, ${randomUUID()}, ${randomUUID()}, ${agentId}, 1000, 'accrued', ${randomUUID()}, now())`;
  return { bookingId, agentId };
}
const DASHBOARD_READ: Role[] = ['ops', 'pin_manager', 'viewer'];
const OPS: Role[] = ['ops'];

async function insertDeal(t: TestContext, tenantId: string, status: 'Application' | 'Booking' = 'Booking'): Promise<string> {
  const id = randomUUID();
  const investorId = tenantId === ownDeals.tenantId ? ownDeals.investorId : null;
  await t.database.sql`INSERT INTO crm.deals (id, tenant_id, title, status, investor_id) VALUES (${id}, ${tenantId}, 'Deal', ${status}, ${investorId})`;
  return id;
}
async function insertProgram(t: TestContext, tenantId: string, isPaid: boolean): Promise<string> {
  const id = randomUUID();
  await t.database.sql`INSERT INTO crm.booking_programs (id, tenant_id, name, is_paid, reserve_duration_minutes, booking_duration_hours) VALUES (${id}, ${tenantId}, 'P', ${isPaid}, 60, 48)`;
  return id;
}
type BookingState = 'reserved-free' | 'reserved-paid' | 'awaiting-contract' | 'awaiting-receipt' | 'booked';
async function insertBooking(t: TestContext, tenantId: string, state: BookingState, createdBy: string | null): Promise<Record<string, string>> {
  const now = Date.now();
  const paid = state !== 'reserved-free' && state !== 'booked';
  const dealId = await insertDeal(t, tenantId);
  const programId = await insertProgram(t, tenantId, paid);
  const id = randomUUID();
  const byState = {
    'reserved-free': { status: 'Reserved', payment_status: 'NotRequired' },
    'reserved-paid': { status: 'Reserved', payment_status: 'Pending' },
    'awaiting-contract': { status: 'AwaitingPayment', payment_status: 'ContractUploaded', contract_document: 'c.pdf' },
    'awaiting-receipt': { status: 'AwaitingPayment', payment_status: 'ReceiptUploaded', contract_document: 'c.pdf', receipt_document: 'r.pdf' },
    booked: { status: 'Booked', payment_status: 'NotRequired', booked_at: new Date(now - 3600_000).toISOString(), booking_expires_at: new Date(now + 47 * 3600_000).toISOString() },
  } as const;
  const row = {
    id, tenant_id: tenantId, deal_id: dealId, program_id: programId, property_object_id: randomUUID(), created_by: createdBy,
    reserve_expires_at: new Date(now + 3600_000).toISOString(), ...byState[state],
    // a paid booking carries a requisite set reference (upload-contract needs one)
    ...(paid ? { requisite_set_id: randomUUID(), requisite_set_version: 1 } : {}),
  };
  await t.database.sql`INSERT INTO crm.bookings ${t.database.sql(row as never)}`;
  return { bookingId: id, dealId, programId };
}
const booking = (state: BookingState) => (t: TestContext, tenantId: string, actor: Actor | null) => insertBooking(t, tenantId, state, actor?.userId ?? null);

const CASES: Case[] = [
  // auth
  { path: 'auth.signIn', allowed: 'public', input: (fx) => ({ email: fx.ids.email, password: TEST_PASSWORD }) },
  { path: 'auth.signOut', allowed: 'public', input: () => undefined },
  { path: 'auth.me', allowed: 'signed-in', input: () => undefined },
  { path: 'auth.userNames', allowed: 'signed-in', input: (fx) => ({ ids: [fx.ids.userId] }) },
  // chessboard
  { path: 'chessboard.projects', allowed: 'signed-in', input: () => undefined },
  { path: 'chessboard.buildings', allowed: 'signed-in', byId: true, input: (fx) => ({ projectId: fx.world.projectId }) },
  { path: 'chessboard.grid', allowed: 'signed-in', byId: true, input: (fx) => ({ buildingId: fx.world.buildingId }) },
  { path: 'chessboard.object', allowed: 'signed-in', byId: true, input: (fx) => ({ propertyObjectId: fx.world.objectIds.reserved }) },
  { path: 'chessboard.objectLabels', allowed: 'signed-in', input: (fx) => ({ ids: [fx.world.objectIds.free, fx.world.objectIds.sold] }) },
  {
    path: 'chessboard.releaseHold', allowed: ['ops', 'pin_manager'], byId: true,
    setup: async (t, tenantId) => ({ objectId: (await insertTenantWorld(t.database.db, tenantId)).objectIds.reserved }),
    input: (fx) => ({ propertyObjectId: fx.ids.objectId, reason: 'matrix' }),
  },
  // catalog actions (#19): developer manager and PIN manager; each call on a fresh world (they delete)
  {
    path: 'chessboard.setObjectHidden', allowed: ['developer_manager', 'pin_manager'], byId: true,
    setup: async (t, tenantId) => ({ objectId: (await insertTenantWorld(t.database.db, tenantId)).objectIds.free }),
    input: (fx) => ({ propertyObjectId: fx.ids.objectId, hidden: true, reason: 'matrix' }),
  },
  {
    path: 'chessboard.withdrawObject', allowed: ['developer_manager', 'pin_manager'], byId: true,
    setup: async (t, tenantId) => ({ objectId: (await insertTenantWorld(t.database.db, tenantId)).objectIds.free }),
    input: (fx) => ({ propertyObjectId: fx.ids.objectId, reason: 'matrix' }),
  },
  {
    path: 'chessboard.withdrawProject', allowed: ['developer_manager', 'pin_manager'], byId: true,
    setup: async (t, tenantId) => {
      const world = await insertTenantWorld(t.database.db, tenantId);
      // a project with a held object is refused (CONFLICT): free the holds so the role and scope decide
      await t.database.sql`UPDATE chessboard.property_objects SET status = 'Free', reserved_until = NULL, booked_until = NULL, hold_deal_id = NULL, hold_booking_id = NULL WHERE project_id = ${world.projectId}`;
      return { projectId: world.projectId };
    },
    input: (fx) => ({ projectId: fx.ids.projectId, reason: 'matrix' }),
  },
  // booking
  {
    path: 'booking.create', allowed: COMMAND_ROLES['booking.create'], byId: true,
    setup: async (t, tenantId) => ({
      dealId: await insertDeal(t, tenantId, 'Application'), programId: await insertProgram(t, tenantId, false), objectId: await projectedObjectOf(t.database, tenantId),
    }),
    input: (fx) => ({ dealId: fx.ids.dealId, programId: fx.ids.programId, propertyObjectId: fx.ids.objectId }),
  },
  { path: 'booking.uploadContract', allowed: COMMAND_ROLES['booking.uploadContract'], byId: true, setup: booking('reserved-paid'), input: (fx) => ({ bookingId: fx.ids.bookingId, document: 'c.pdf' }) },
  { path: 'booking.uploadReceipt', allowed: COMMAND_ROLES['booking.uploadReceipt'], byId: true, setup: booking('awaiting-contract'), input: (fx) => ({ bookingId: fx.ids.bookingId, document: 'r.pdf' }) },
  { path: 'booking.confirm', allowed: COMMAND_ROLES['booking.confirm'], byId: true, setup: booking('reserved-free'), input: (fx) => ({ bookingId: fx.ids.bookingId }) },
  { path: 'booking.confirmPayment', allowed: COMMAND_ROLES['booking.confirmPayment'], byId: true, setup: booking('awaiting-receipt'), input: (fx) => ({ bookingId: fx.ids.bookingId }) },
  { path: 'booking.extend', allowed: COMMAND_ROLES['booking.extend'], byId: true, setup: booking('booked'), input: (fx) => ({ bookingId: fx.ids.bookingId, idempotencyKey: randomUUID() }) },
  { path: 'booking.cancel', allowed: COMMAND_ROLES['booking.cancel'], byId: true, setup: booking('reserved-free'), input: (fx) => ({ bookingId: fx.ids.bookingId, reason: 'matrix' }) },
  { path: 'booking.startSale', allowed: COMMAND_ROLES['booking.startSale'], byId: true, setup: booking('booked'), input: (fx) => ({ bookingId: fx.ids.bookingId }) },
  {
    path: 'booking.setProgramReward', allowed: COMMAND_ROLES['program.setReward'], byId: true,
    setup: async (t, tenantId) => ({ programId: await insertProgram(t, tenantId, true) }),
    input: (fx) => ({ programId: fx.ids.programId, reward: { kind: 'fixed', value: 1000 } }),
  },
  { path: 'booking.byId', allowed: 'signed-in', byId: true, setup: booking('reserved-free'), input: (fx) => ({ bookingId: fx.ids.bookingId }) },
  { path: 'booking.list', allowed: 'signed-in', setup: booking('reserved-free'), input: (fx) => ({ dealId: fx.ids.dealId }) },
  { path: 'booking.programs', allowed: 'signed-in', input: (fx) => ({ tenantId: fx.tenantId }) },
  // deal
  { path: 'deal.cancel', allowed: COMMAND_ROLES['deal.cancel'], byId: true, setup: async (t, tenantId) => ({ dealId: await insertDeal(t, tenantId, 'Application') }), input: (fx) => ({ dealId: fx.ids.dealId, reason: 'matrix' }) },
  { path: 'deal.list', allowed: 'signed-in', setup: async (t, tenantId) => ({ dealId: await insertDeal(t, tenantId) }), input: (fx) => ({ search: fx.ids.dealId }) },
  { path: 'deal.byId', allowed: 'signed-in', byId: true, setup: async (t, tenantId) => ({ dealId: await insertDeal(t, tenantId) }), input: (fx) => ({ dealId: fx.ids.dealId }) },
  // profile (#23): requisite sets, created by the caller (an agent sees the sets it created)
  { path: 'profile.create', allowed: PROFILE_ROLES['profile.create'], input: (fx) => ({ tenantId: fx.tenantId, fields: uniqueRequisites() }) },
  { path: 'profile.edit', allowed: PROFILE_ROLES['profile.edit'], byId: true, setup: requisiteSet, input: (fx) => ({ setId: fx.ids.setId, expectedVersion: 1, fields: uniqueRequisites() }) },
  { path: 'profile.list', allowed: PROFILE_ROLES['profile.list'], setup: requisiteSet, input: (fx) => ({ setId: fx.ids.setId }) },
  { path: 'profile.reveal', allowed: PROFILE_ROLES['profile.reveal'], byId: true, setup: requisiteSet, input: (fx) => ({ setId: fx.ids.setId, reason: 'matrix' }) },
  { path: 'profile.erase', allowed: PROFILE_ROLES['profile.erase'], byId: true, setup: requisiteSet, input: (fx) => ({ setId: fx.ids.setId, reason: 'matrix' }) },
  // the reveal log: a read of every tenant's reveals for ops and PIN managers (no tenant-scoped role may read it)
  { path: 'profile.reveals', allowed: PROFILE_ROLES['profile.reveals'], setup: revealOf, input: (fx) => ({ setId: fx.ids.setId }) },
  // catalog (storefront reads are public by design)
  // messenger (#20): a deal chat is read by anyone of its tenant; its participants post
  { path: 'messenger.chat', allowed: 'signed-in', byId: true, setup: dealChat, input: (fx) => ({ dealId: fx.ids.dealId }) },
  { path: 'messenger.post', allowed: POSTING_ROLES, byId: true, setup: dealChat, input: (fx) => ({ dealId: fx.ids.dealId, text: 'matrix' }) },
  // notifications (#20): every signed-in user reads and marks its own; another tenant's are invisible (never NOT_FOUND: ignored)
  { path: 'notifications.list', allowed: 'signed-in', setup: notificationFor, input: () => ({ limit: 100 }) },
  { path: 'notifications.lines', allowed: 'signed-in', setup: notificationFor, input: () => ({ limit: 100 }) },
  { path: 'notifications.unreadCount', allowed: 'signed-in', input: () => undefined },
  { path: 'notifications.markRead', allowed: 'signed-in', setup: notificationFor, input: (fx) => ({ ids: [Number(fx.ids.notificationId)] }) },
  { path: 'notifications.markAllRead', allowed: 'signed-in', input: () => undefined },
  // rewards: an agent reads its own accruals; a developer manager its tenant's totals per agent
  { path: 'rewards.mine', allowed: ['agent'], setup: accrualFor, input: () => ({}) },
  { path: 'rewards.totals', allowed: ['developer_manager', 'pin_manager'], setup: accrualFor, input: () => undefined },
  // reports: a tenant's developer managers (their tenant) and PIN managers; the period's bookings are the fixture's
  { path: 'reports.funnel', allowed: ['developer_manager', 'pin_manager'], setup: booking('reserved-free'), input: () => ({ from: new Date(Date.now() - 86_400_000), to: new Date(Date.now() + 86_400_000) }) },
  { path: 'reports.tenants', allowed: ['pin_manager'], input: () => undefined },
  { path: 'catalog.cardById', allowed: 'public', input: (fx) => ({ id: fx.world.objectIds.free }) },
  { path: 'catalog.projectCardById', allowed: 'public', input: (fx) => ({ id: fx.world.projectId }) },
  { path: 'catalog.delistedBacklog', allowed: DASHBOARD_READ, input: () => undefined },
  { path: 'catalog.nextRetentionCandidates', allowed: DASHBOARD_READ, input: () => undefined },
  // ops
  { path: 'ops.bookingTimeline', allowed: 'signed-in', byId: true, setup: booking('booked'), input: (fx) => ({ bookingId: fx.ids.bookingId }) },
  { path: 'ops.dashboard.overview', allowed: DASHBOARD_READ, input: () => undefined },
  { path: 'ops.dashboard.stuckHolds', allowed: DASHBOARD_READ, input: () => ({ phase: 'all' }) },
  { path: 'ops.dashboard.holdReleases', allowed: DASHBOARD_READ, input: () => ({ source: 'all', rangeHours: 24 }) },
  { path: 'ops.dashboard.jobs', allowed: DASHBOARD_READ, input: () => undefined },
  { path: 'ops.dashboard.jobRuns', allowed: DASHBOARD_READ, input: () => ({ job: 'property-object-hold-expiration' }) },
  { path: 'ops.dashboard.messaging', allowed: DASHBOARD_READ, input: () => undefined },
  { path: 'ops.dashboard.dlqMessages', allowed: DASHBOARD_READ, input: () => ({ includeDecided: true }) },
  { path: 'ops.dashboard.catalog', allowed: DASHBOARD_READ, input: () => undefined },
  { path: 'ops.dashboard.reconciliation', allowed: DASHBOARD_READ, input: () => undefined },
  {
    path: 'ops.dashboard.releaseHold', allowed: OPS,
    setup: async (t, tenantId) => ({ objectId: (await insertTenantWorld(t.database.db, tenantId)).objectIds.reserved }),
    input: (fx) => ({ propertyObjectId: fx.ids.objectId, reason: 'matrix' }),
  },
  { path: 'ops.dashboard.runJobNow', allowed: OPS, input: () => ({ job: 'project-aggregates-recalc', reason: 'matrix' }) },
  { path: 'ops.dashboard.pauseJob', allowed: OPS, input: () => ({ job: 'delisted-retention', reason: 'matrix' }) },
  { path: 'ops.dashboard.resumeJob', allowed: OPS, input: () => ({ job: 'delisted-retention', reason: 'matrix' }) },
  { path: 'ops.dashboard.requeueDlq', allowed: OPS, input: () => ({ topic: 'x.dlq', partition: 0, offset: 0, reason: 'matrix' }) },
  { path: 'ops.dashboard.discardDlq', allowed: OPS, input: () => ({ topic: 'x.dlq', partition: 0, offset: 0, reason: 'matrix' }) },
  { path: 'ops.dashboard.requeueDlqMany', allowed: OPS, input: () => ({ refs: [{ topic: 'x.dlq', partition: 0, offset: 0 }], reason: 'matrix' }) },
  { path: 'ops.dashboard.discardDlqMany', allowed: OPS, input: () => ({ refs: [{ topic: 'x.dlq', partition: 0, offset: 0 }], reason: 'matrix' }) },
  {
    path: 'ops.dashboard.repairReconciliation', allowed: OPS,
    setup: async (t, tenantId) => ({ objectId: (await insertTenantWorld(t.database.db, tenantId)).objectIds.reserved }),
    input: (fx) => ({ action: 'manual_release', propertyObjectId: fx.ids.objectId, reason: 'matrix' }),
  },
  {
    path: 'ops.dashboard.repairDivergence', allowed: OPS, setup: booking('booked'),
    input: (fx) => ({ action: 'cancel_booking', bookingId: fx.ids.bookingId, reason: 'matrix' }),
  },
];

export interface MatrixResult { calls: number; leaks: string[]; mismatches: string[] }

type SetOwner = 'own' | 'other';
/**
 * Requisite references and reveals: every role × a set the caller created or another agent created × a
 * set of the caller's tenant or a foreign one, through both commands that reference a set (booking.create,
 * booking.uploadContract on a booking of the caller's tenant) and profile.reveal. Written down here on its
 * own (not derived from profile's code) so a change of the rule shows up as a mismatch: a set may be used
 * by its creator and the managers of its tenant (developer managers of that tenant, PIN managers), and a
 * reference must also stay inside the booking's tenant. A refusal must be NOT_FOUND (never an oracle), and
 * a refused reference must leave the set erasable.
 */
async function requisiteReferenceMatrix(t: TestContext, actors: Record<Role, Actor>, tenants: Record<Tenant, string>) {
  const leaks: string[] = [];
  const mismatches: string[] = [];
  let calls = 0;
  const expected = (role: Role, owner: SetOwner, tenant: Tenant, reveal: boolean): 'ok' | 'NOT_FOUND' => {
    if (role === 'pin_manager') return reveal || tenant === 'own' ? 'ok' : 'NOT_FOUND';
    // an investor books for a developer's buyer whose requisites are the developer's: no set is ever its own
    if (role === 'investor') return 'NOT_FOUND';
    if (tenant === 'foreign') return 'NOT_FOUND';
    if (role === 'developer_manager') return 'ok';
    return owner === 'own' ? 'ok' : 'NOT_FOUND';
  };
  const otherAgent: Record<Tenant, string> = { own: randomUUID(), foreign: randomUUID() };
  for (const role of ALL_ROLES) {
    const actor = actors[role];
    const caller = createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, actor, { ip: '10.31.0.1', setCookie: () => {} }));
    for (const owner of ['own', 'other'] as SetOwner[]) {
      for (const tenant of ['own', 'foreign'] as Tenant[]) {
        const creator: Actor = { userId: owner === 'own' ? actor.userId : otherAgent[tenant], role: 'pin_manager', tenantId: null };
        const attempts: Array<{ path: string; allowed: readonly Role[]; reveal: boolean; run: (setId: string) => Promise<unknown> }> = [
          {
            path: 'booking.create', allowed: COMMAND_ROLES['booking.create'], reveal: false,
            run: async (setId) => caller.booking.create({
              dealId: await insertDeal(t, tenants.own, 'Application'), programId: await insertProgram(t, tenants.own, false),
              propertyObjectId: await projectedObjectOf(t.database, tenants.own), requisites: { setId, version: 1 },
            }),
          },
          {
            path: 'booking.uploadContract', allowed: COMMAND_ROLES['booking.uploadContract'], reveal: false,
            run: async (setId) => {
              const { bookingId } = await insertBooking(t, tenants.own, 'reserved-paid', actor.userId);
              await t.database.sql`UPDATE crm.bookings SET requisite_set_id = NULL, requisite_set_version = NULL WHERE id = ${bookingId!}`;
              return caller.booking.uploadContract({ bookingId: bookingId!, document: 'c.pdf', requisites: { setId, version: 1 } });
            },
          },
          { path: 'profile.reveal', allowed: PROFILE_ROLES['profile.reveal'], reveal: true, run: (setId) => caller.profile.reveal({ setId, reason: 'matrix' }) },
        ];
        for (const a of attempts) {
          const { id: setId } = await seedRequisiteSet(t, creator, undefined, tenants[tenant]);
          const where = `${a.path} with requisites as ${role}, ${owner === 'own' ? 'its own' : "another agent's"} set of the ${tenant} tenant`;
          calls++;
          let outcome: string;
          let answer: unknown;
          try {
            answer = await a.run(setId);
            outcome = 'ok';
          } catch (e) {
            outcome = e instanceof TRPCError ? e.code : `THROWN ${(e as Error).message}`;
          }
          const want = (a.allowed as readonly string[]).includes(role) ? expected(role, owner, tenant, a.reveal) : 'FORBIDDEN';
          if (outcome !== want) (outcome === 'ok' ? leaks : mismatches).push(`${where}: ${outcome}, expected ${want}`);
          if (outcome === 'ok' && want === 'ok' && a.reveal && (answer as { id?: string }).id !== setId) mismatches.push(`${where}: revealed another set`);
          if (outcome !== 'ok') {
            // a refused reference holds nothing: a PIN manager erases the set at once
            const pin: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };
            const erase = createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, pin, { ip: '10.31.0.2', setCookie: () => {} })).profile.erase;
            try {
              await erase({ setId, reason: 'matrix' });
            } catch (e) {
              leaks.push(`${where}: the refused reference blocks the erasure (${e instanceof TRPCError ? e.code : (e as Error).message})`);
            }
          }
        }
      }
    }
  }
  return { calls, leaks, mismatches };
}

export async function authorizationMatrixScenario(t: TestContext, opts: { label: string }): Promise<MatrixResult> {
  const { db, sql } = t.database;
  const tenantA = await insertTenant(db, 'Own tenant');
  const tenantB = await insertTenant(db, 'Foreign tenant');
  const worlds: Record<Tenant, TenantWorld> = { own: await insertTenantWorld(db, tenantA), foreign: await insertTenantWorld(db, tenantB) };
  const actors = {} as Record<Role, Actor & { email: string }>;
  for (const role of ALL_ROLES) {
    const u = await insertUser(db, role, tenantA);
    actors[role] = { ...u.actor, email: u.email };
  }
  Object.assign(ownDeals, { tenantId: tenantA, investorId: actors.investor.userId });
  const otherUser = { own: (await insertUser(db, 'viewer', tenantA)).id, foreign: (await insertUser(db, 'viewer', tenantB)).id };

  // the foreign tenant's footprint in every place a dashboard reads: a stuck hold past grace, a released
  // hold, a failing outbox row, a DLQ record, a booking timeline, a hold mismatch
  const foreignHold = await insertTenantWorld(db, tenantB, new Date(Date.now() - 3 * 3600_000));
  await sql`UPDATE chessboard.property_objects SET reserved_until = now() - interval '2 hours' WHERE id = ${foreignHold.objectIds.reserved}`;
  const foreignBooking = await insertBooking(t, tenantB, 'booked', null);
  await sql`INSERT INTO chessboard.hold_releases (property_object_id, tenant_id, project_id, hold_deal_id, from_status, expired_timer_at, overdue_by_ms, status_source, run_id, message_id, released_at)
            VALUES (${foreignHold.objectIds.booked}, ${tenantB}, ${foreignHold.projectId}, ${foreignBooking.dealId}, 'Booked', now() - interval '1 hour', 3600000, 'ExpirationJob', ${randomUUID()}, ${randomUUID()}, now())`;
  const failingMessage = randomUUID();
  await sql`INSERT INTO crm.outbox (message_id, topic, key, aggregate_type, aggregate_id, payload, headers, attempts, last_error)
            VALUES (${failingMessage}, 'pin.crm.booking-created.v1', ${foreignBooking.bookingId}, 'Booking', ${foreignBooking.bookingId},
                    ${JSON.stringify({ messageId: failingMessage, tenantId: tenantB, payload: { bookingId: foreignBooking.bookingId } })}::jsonb, '{}'::jsonb, 3, 'broker unavailable')`;
  await sql`INSERT INTO crm.booking_timeline (booking_id, tenant_id, at, actor_type, actor_id, action, from_status, to_status, correlation_id, message_ids, booking_version)
            VALUES (${foreignBooking.bookingId}, ${tenantB}, now(), 'user', ${otherUser.foreign}, 'create', null, 'Reserved', ${randomUUID()}, ${JSON.stringify([failingMessage])}::jsonb, 1)`;
  const foreignIds = new Set<string>([
    tenantB, ...Object.values(worlds.foreign.objectIds), worlds.foreign.projectId, worlds.foreign.buildingId,
    ...Object.values(foreignHold.objectIds), foreignHold.projectId, foreignHold.buildingId, otherUser.foreign,
    foreignBooking.bookingId, foreignBooking.dealId, foreignBooking.programId, failingMessage,
  ]);

  const procedures = Object.keys((appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures);
  expect(CASES.map((c) => c.path).sort(), 'every procedure has a row in the matrix').toEqual(procedures.sort());

  const leaks: string[] = [];
  const mismatches: string[] = [];
  let calls = 0;
  const callers: (Role | null)[] = [null, ...ALL_ROLES];
  for (const c of CASES) {
    for (const role of callers) {
      for (const tenant of ['own', 'foreign'] as Tenant[]) {
        const actor = role ? actors[role] : null;
        const world = worlds[tenant];
        const ids = (await c.setup?.(t, world.tenantId, actor)) ?? {};
        ids.email = actor?.email ?? actors.viewer.email;
        ids.userId = otherUser[tenant];
        const caller = createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, actor,
          { ip: `10.30.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`, setCookie: () => {} }));
        const fn = c.path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], caller) as (i: unknown) => Promise<unknown>;
        const where = `${c.path} as ${role ?? 'signed-out'} on ${tenant} tenant`;
        calls++;
        let outcome: string;
        let answer: unknown;
        try {
          answer = await fn(c.input({ world, tenantId: world.tenantId, ids }));
          outcome = 'ok';
        } catch (e) {
          outcome = e instanceof TRPCError ? e.code : `THROWN ${(e as Error).message}`;
          answer = e instanceof TRPCError ? { message: e.message, cause: (e.cause as { details?: unknown })?.details } : undefined;
        }
        const scoped = role !== null && !CROSS_TENANT.has(role);
        const allowedRole = c.allowed === 'public' || (role !== null && (c.allowed === 'signed-in' || c.allowed.includes(role)));
        if (c.allowed !== 'public' && role === null) {
          if (outcome !== 'UNAUTHORIZED') (outcome === 'ok' ? leaks : mismatches).push(`${where}: ${outcome}, expected UNAUTHORIZED`);
          continue;
        }
        if (!allowedRole) {
          if (outcome !== 'FORBIDDEN') (outcome === 'ok' ? leaks : mismatches).push(`${where}: ${outcome}, expected FORBIDDEN`);
          continue;
        }
        if (c.byId && scoped && tenant === 'foreign' && outcome !== 'NOT_FOUND') {
          (outcome === 'ok' ? leaks : mismatches).push(`${where}: ${outcome}, expected NOT_FOUND`);
          continue;
        }
        if (outcome.startsWith('THROWN') || outcome === 'INTERNAL_SERVER_ERROR') mismatches.push(`${where}: ${outcome}`);
        if (scoped && !c.path.startsWith('catalog.') && answer !== undefined) {
          const text = JSON.stringify(superjson.serialize(answer).json);
          const seen = [...foreignIds].filter((id) => text.includes(id));
          if (seen.length) leaks.push(`${where}: the answer names ${seen.length} id(s) of the foreign tenant (${seen.slice(0, 3).join(', ')})`);
        }
      }
    }
  }

  const procedureCalls = calls;
  const references = await requisiteReferenceMatrix(t, actors, { own: tenantA, foreign: tenantB });
  calls += references.calls;
  leaks.push(...references.leaks);
  mismatches.push(...references.mismatches);

  figure('authorization-matrix', `${opts.label}: ${CASES.length} procedures × ${callers.length} callers (${ALL_ROLES.join(', ')}, signed-out) × own/foreign tenant = ${procedureCalls} calls, `
    + `+ ${references.calls} requisite references/reveals (role × own/other's set × own/foreign tenant) — leaks: ${leaks.length}, unexpected answers: ${mismatches.length}`, { procedures: CASES.length, calls, leaks: leaks.length, mismatches: mismatches.length, details: [...leaks, ...mismatches].slice(0, 20) });
  return { calls, leaks, mismatches };
}
