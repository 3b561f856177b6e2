import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTenant, insertUser } from '../../test/fixtures/auth.fixtures';
import { insertObject, insertWorld } from '../../test/fixtures/ops-dashboard.fixtures';
import type { Actor } from '../auth/actor';
import { crmContracts, type CrmPayload, type CrmTopic } from '../contracts/crm';
import type { AnyEnvelope } from '../contracts/envelope';
import { createKafka } from '../platform/kafka/client';
import { TOPICS } from '../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { createContextFor } from '../trpc/context';
import { createCaller } from '../main/app-router';
import type { JobContext } from '../platform/jobs/types';
import type { Env } from '../main/env';
import { notificationsBookingEventsConsumer } from './booking-events.consumer';
import { createDeadlineSoonJob } from './deadline-soon.job';
import { createNotificationsRetentionJob } from './retention.job';

let t: TestContext;
beforeAll(async () => { t = await createTestContext({ env: { NOTIFICATIONS_DEADLINE_SOON_MINUTES: '15', NOTIFICATIONS_RETENTION_MS: String(24 * 3600_000) } }); });
afterAll(async () => { await t?.close(); });

const TYPES: Record<CrmTopic, string> = {
  [TOPICS.bookingCreated]: 'BookingCreated', [TOPICS.bookingConfirmed]: 'BookingConfirmed', [TOPICS.bookingPaid]: 'BookingPaid',
  [TOPICS.bookingExtended]: 'BookingExtended', [TOPICS.bookingExpired]: 'BookingExpired', [TOPICS.bookingCancelled]: 'BookingCancelled',
  [TOPICS.dealCancelled]: 'DealCancelled', [TOPICS.dealSaleStarted]: 'DealSaleStarted',
};

/** Applies one crm event as the runner would (the handler in a transaction), without the broker. */
async function apply<T extends CrmTopic>(topic: T, payload: CrmPayload<T>, messageId = randomUUID(), occurredAt = new Date()) {
  const p = payload as { tenantId: string; bookingId?: string | null; dealId: string };
  const envelope = crmContracts[topic].parse({
    messageId, type: TYPES[topic], contractVersion: 1, aggregateType: 'Booking', aggregateId: p.bookingId ?? p.dealId,
    occurredAt: occurredAt.toISOString(), tenantId: p.tenantId, correlationId: randomUUID(), causationId: null, payload,
  }) as AnyEnvelope;
  return t.database.db.transaction((tx) => notificationsBookingEventsConsumer.handle(tx, { topic, envelope, partition: 0, offset: '0' }, { logger: t.logger, env: t.env }));
}

const iso = (ms: number) => new Date(Date.now() + ms).toISOString();
const created = (tenantId: string, createdBy: string | null, reserveInMs = 3600_000) => ({
  bookingId: randomUUID(), dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId, createdBy, bookingVersion: 1,
  programId: randomUUID(), status: 'Reserved' as const, reserveExpiresAt: iso(reserveInMs), createdAt: iso(0),
});
const caller = (actor: Actor) => createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, actor));
const jobCtx = (): JobContext<Env> => ({
  database: t.database, env: t.env, logger: t.logger, runId: randomUUID(), signal: new AbortController().signal, trigger: 'manual', kafka: createKafka(t.env),
});

describe('notifications router: per-user, tenant-scoped, read/unread', () => {
  it('the creator and the tenant\'s developer managers see it; nobody of another tenant does; reads are per user', async () => {
    const tenantA = await insertTenant(t.database.db, 'A');
    const tenantB = await insertTenant(t.database.db, 'B');
    const agentA = (await insertUser(t.database.db, 'agent', tenantA)).actor;
    const otherAgentA = (await insertUser(t.database.db, 'agent', tenantA)).actor;
    const dmA1 = (await insertUser(t.database.db, 'developer_manager', tenantA)).actor;
    const dmA2 = (await insertUser(t.database.db, 'developer_manager', tenantA)).actor;
    const dmB = (await insertUser(t.database.db, 'developer_manager', tenantB)).actor;
    const agentB = (await insertUser(t.database.db, 'agent', tenantB)).actor;
    const viewerA = (await insertUser(t.database.db, 'viewer', tenantA)).actor;

    const e = created(tenantA, agentA.userId);
    await apply(TOPICS.bookingCreated, e);
    await apply(TOPICS.bookingCreated, created(tenantB, agentB.userId));

    const listA = await caller(agentA).notifications.list({});
    expect(listA.items.map((i) => [i.type, i.bookingId, i.read])).toEqual([['BookingCreated', e.bookingId, false]]);
    for (const dm of [dmA1, dmA2]) expect((await caller(dm).notifications.list({})).items.map((i) => i.bookingId)).toEqual([e.bookingId]);
    for (const other of [otherAgentA, viewerA]) expect((await caller(other).notifications.list({})).items).toEqual([]);
    expect((await caller(dmB).notifications.list({})).items.map((i) => i.bookingId)).not.toContain(e.bookingId);
    expect((await caller(agentB).notifications.list({})).items.map((i) => i.bookingId)).not.toContain(e.bookingId);

    // a foreign user cannot mark it read: the id looks missing
    expect(await caller(dmB).notifications.markRead({ ids: [listA.items[0]!.id] })).toEqual({ marked: 0 });
    const dmItem = (await caller(dmA1).notifications.list({})).items[0]!;
    expect(await caller(dmB).notifications.markRead({ ids: [dmItem.id] })).toEqual({ marked: 0 });

    expect(await caller(dmA1).notifications.unreadCount()).toEqual({ unread: 1 });
    expect(await caller(dmA1).notifications.markRead({ ids: [dmItem.id] })).toEqual({ marked: 1 });
    expect(await caller(dmA1).notifications.markRead({ ids: [dmItem.id] })).toEqual({ marked: 0 });
    expect(await caller(dmA1).notifications.unreadCount()).toEqual({ unread: 0 });
    expect(await caller(dmA2).notifications.unreadCount()).toEqual({ unread: 1 }); // per user
    expect(await caller(agentA).notifications.markAllRead()).toEqual({ marked: 1 });
    expect(await caller(agentA).notifications.unreadCount()).toEqual({ unread: 0 });
    expect((await caller(agentA).notifications.list({})).items[0]!.read).toBe(true);
  });

  it('lists newest first, paginated by cursor; unreadOnly', async () => {
    const tenant = await insertTenant(t.database.db);
    const agent = (await insertUser(t.database.db, 'agent', tenant)).actor;
    const events = [];
    for (let i = 0; i < 5; i++) { const e = created(tenant, agent.userId); events.push(e); await apply(TOPICS.bookingCreated, e); }
    const p1 = await caller(agent).notifications.list({ limit: 2 });
    const p2 = await caller(agent).notifications.list({ limit: 2, cursor: p1.nextCursor });
    const p3 = await caller(agent).notifications.list({ limit: 2, cursor: p2.nextCursor });
    expect([...p1.items, ...p2.items, ...p3.items].map((i) => i.bookingId)).toEqual(events.map((e) => e.bookingId).reverse());
    expect(p3.nextCursor).toBeNull();
    await caller(agent).notifications.markRead({ ids: [p1.items[0]!.id] });
    expect((await caller(agent).notifications.list({ unreadOnly: true })).items).toHaveLength(4);
  });

  it('bad input is a typed BAD_REQUEST and writes nothing', async () => {
    const tenant = await insertTenant(t.database.db);
    const agent = (await insertUser(t.database.db, 'agent', tenant)).actor;
    const before = await t.database.sql`SELECT count(*)::int AS n FROM notifications.reads`;
    for (const input of [{ ids: [] }, { ids: ['x'] }, { ids: [-1] }, { ids: [1], extra: 1 }]) {
      await expect(caller(agent).notifications.markRead(input as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    }
    await expect(caller(agent).notifications.list({ limit: 1000 } as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(await t.database.sql`SELECT count(*)::int AS n FROM notifications.reads`).toEqual(before);
  });
});

describe('job notifications-deadline-soon', () => {
  it('fires once per deadline when less than NOTIFICATIONS_DEADLINE_SOON_MINUTES are left; an extension is a new deadline; ended holds never', async () => {
    const tenant = await insertTenant(t.database.db);
    const agent = (await insertUser(t.database.db, 'agent', tenant)).actor;
    const soon = created(tenant, agent.userId, 10 * 60_000); // 10 min left < 15
    const later = created(tenant, agent.userId, 60 * 60_000); // 60 min left
    const cancelledSoon = created(tenant, agent.userId, 5 * 60_000);
    await apply(TOPICS.bookingCreated, soon);
    await apply(TOPICS.bookingCreated, later);
    await apply(TOPICS.bookingCreated, cancelledSoon);
    await apply(TOPICS.bookingCancelled, { ...cancelledSoon, bookingVersion: 2, fromStatus: 'Reserved', reason: 'x', cancelledAt: iso(0) });

    const job = createDeadlineSoonJob();
    const first = await job.run(jobCtx());
    expect(first).toMatchObject({ HoldsNotified: 1, NotificationsCreated: 2 });
    expect(await job.run(jobCtx())).toMatchObject({ HoldsNotified: 0, NotificationsCreated: 0 });
    const soonRows = await t.database.sql`SELECT recipient, data->>'phase' AS phase FROM notifications.notifications WHERE booking_id = ${soon.bookingId} AND type = 'DeadlineSoon' ORDER BY recipient`;
    expect(soonRows).toEqual([{ recipient: 'role:developer_manager', phase: 'Reserve' }, { recipient: `user:${agent.userId}`, phase: 'Reserve' }]);
    expect(await t.database.sql`SELECT 1 FROM notifications.notifications WHERE type = 'DeadlineSoon' AND booking_id IN ${t.database.sql([later.bookingId, cancelledSoon.bookingId])}`).toHaveLength(0);

    // confirmed: the booking's own deadline (48 h away) is not soon; an extension to 5 min from now is, once
    await apply(TOPICS.bookingConfirmed, { ...soon, bookingVersion: 2, status: 'Booked', bookedAt: iso(0), bookingExpiresAt: iso(48 * 3600_000) });
    expect(await job.run(jobCtx())).toMatchObject({ HoldsNotified: 0 });
    await apply(TOPICS.bookingExtended, { ...soon, bookingVersion: 3, previousBookingExpiresAt: iso(48 * 3600_000), bookingExpiresAt: iso(5 * 60_000) });
    // a late, older event changes nothing
    await apply(TOPICS.bookingConfirmed, { ...soon, bookingVersion: 2, status: 'Booked', bookedAt: iso(0), bookingExpiresAt: iso(48 * 3600_000) });
    expect(await job.run(jobCtx())).toMatchObject({ HoldsNotified: 1, NotificationsCreated: 2 });
    expect(await job.run(jobCtx())).toMatchObject({ HoldsNotified: 0 });
    expect((await caller(agent).notifications.list({})).items.filter((i) => i.type === 'DeadlineSoon' && i.bookingId === soon.bookingId)).toHaveLength(2);
  });

  it('two runs at the same time notify a deadline once (SKIP LOCKED)', async () => {
    const tenant = await insertTenant(t.database.db);
    const e = created(tenant, null, 60_000);
    await apply(TOPICS.bookingCreated, e);
    const job = createDeadlineSoonJob();
    const [a, b] = await Promise.all([job.run(jobCtx()), job.run(jobCtx())]);
    expect(Number(a.HoldsNotified) + Number(b.HoldsNotified)).toBeGreaterThanOrEqual(1);
    expect(await t.database.sql`SELECT recipient FROM notifications.notifications WHERE booking_id = ${e.bookingId} AND type = 'DeadlineSoon'`).toEqual([{ recipient: 'role:developer_manager' }]);
  });
});

describe('the bell\'s lines', () => {
  it('a booking\'s line shows its newest notice by the event\'s time, also when the events arrived out of order', async () => {
    const tenant = await insertTenant(t.database.db);
    const agent = (await insertUser(t.database.db, 'agent', tenant)).actor;
    const e = created(tenant, agent.userId);
    const confirmedAt = new Date();
    // crm's topics are consumed in parallel: the confirmation is stored first, the creation after it
    await apply(TOPICS.bookingConfirmed, {
      bookingId: e.bookingId, dealId: e.dealId, propertyObjectId: e.propertyObjectId, tenantId: tenant, createdBy: agent.userId, bookingVersion: 2,
      status: 'Booked', bookedAt: confirmedAt.toISOString(), bookingExpiresAt: iso(48 * 3600_000),
    }, randomUUID(), confirmedAt);
    await apply(TOPICS.bookingCreated, e, randomUUID(), new Date(confirmedAt.getTime() - 1000));
    const line = (await caller(agent).notifications.lines({ limit: 20 })).items.find((i) => i.bookingId === e.bookingId)!;
    expect(line).toMatchObject({ type: 'BookingConfirmed', count: 2 });
  });
});

describe('job notifications-retention', () => {
  it('removes read notifications older than the retention; unread and recent ones stay', async () => {
    const tenant = await insertTenant(t.database.db);
    const agent = (await insertUser(t.database.db, 'agent', tenant)).actor;
    const oldRead = created(tenant, agent.userId);
    const oldUnread = created(tenant, agent.userId);
    const recentRead = created(tenant, agent.userId);
    for (const e of [oldRead, oldUnread, recentRead]) await apply(TOPICS.bookingCreated, e);
    await t.database.sql`UPDATE notifications.notifications SET created_at = now() - interval '2 days' WHERE booking_id IN ${t.database.sql([oldRead.bookingId, oldUnread.bookingId])}`;
    const items = (await caller(agent).notifications.list({})).items;
    await caller(agent).notifications.markRead({ ids: items.filter((i) => i.bookingId === oldRead.bookingId || i.bookingId === recentRead.bookingId).map((i) => i.id) });

    const s = await createNotificationsRetentionJob().run(jobCtx());
    expect(s.DeletedNotifications).toBe(1);
    const left = (await caller(agent).notifications.list({ limit: 100 })).items.map((i) => i.bookingId);
    expect(left).not.toContain(oldRead.bookingId);
    expect(left).toEqual(expect.arrayContaining([oldUnread.bookingId, recentRead.bookingId]));
    expect(await createNotificationsRetentionJob().run(jobCtx())).toMatchObject({ DeletedNotifications: 0 });
  });
});

describe('notifications of an investor\'s deal', () => {
  it('the deal\'s investor is a recipient of every notice of its booking (named by booking-created, remembered after), wherever the developer; another investor sees none', async () => {
    const tenantA = await insertTenant(t.database.db, 'A');
    const agentA = (await insertUser(t.database.db, 'agent', tenantA)).actor;
    const investor = (await insertUser(t.database.db, 'investor', null)).actor;
    const otherInvestor = (await insertUser(t.database.db, 'investor', null)).actor;
    const e = { ...created(tenantA, agentA.userId), investorId: investor.userId };
    await apply(TOPICS.bookingCreated, e);
    // later events do not name the investor: notifications remembers it from booking-created
    await apply(TOPICS.bookingConfirmed, {
      bookingId: e.bookingId, dealId: e.dealId, propertyObjectId: e.propertyObjectId, tenantId: tenantA, createdBy: agentA.userId, bookingVersion: 2,
      status: 'Booked', bookedAt: iso(0), bookingExpiresAt: iso(48 * 3600_000),
    });
    const mine = await caller(investor).notifications.list({});
    expect(mine.items.map((i) => [i.type, i.bookingId])).toEqual([['BookingConfirmed', e.bookingId], ['BookingCreated', e.bookingId]]);
    expect((await caller(investor).notifications.unreadCount()).unread).toBe(2);
    expect((await caller(otherInvestor).notifications.list({})).items).toEqual([]);
    // the agent who booked still gets its own, once each
    expect((await caller(agentA).notifications.list({})).items.map((i) => i.type)).toEqual(['BookingConfirmed', 'BookingCreated']);
  });

  it('an investor who booked itself gets one notice per event, not two', async () => {
    const tenantA = await insertTenant(t.database.db, 'A');
    const investor = (await insertUser(t.database.db, 'investor', null)).actor;
    const e = { ...created(tenantA, investor.userId), investorId: investor.userId };
    await apply(TOPICS.bookingCreated, e);
    expect((await caller(investor).notifications.list({})).items.map((i) => i.type)).toEqual(['BookingCreated']);
  });
});

describe('a notice names the flat, the deal and who acted; the bell reads one line per booking', () => {
  it('carries the flat number, the deal title and the actor of the transition; repeats of one booking read as one line with a count', async () => {
    const w = await insertWorld(t.database, 'Север');
    const agent = (await insertUser(t.database.db, 'agent', w.tenantId)).actor;
    const manager = (await insertUser(t.database.db, 'developer_manager', w.tenantId)).actor;
    const flat = await insertObject(t.database, w, { status: 'Free', number: '3012' });
    const dealId = randomUUID();
    await t.database.sql`INSERT INTO crm.deals (id, tenant_id, title, status) VALUES (${dealId}, ${w.tenantId}, 'Сделка №1019', 'Booking')`;
    const e = { ...created(w.tenantId, agent.userId), dealId, propertyObjectId: flat.id };
    // crm's timeline says who made each transition: the agent created, the manager extended
    const timeline = async (version: number, actorId: string) => t.database.sql`INSERT INTO crm.booking_timeline
      (booking_id, tenant_id, actor_type, actor_id, action, to_status, booking_version) VALUES (${e.bookingId}, ${w.tenantId}, 'user', ${actorId}, 'x', 'Booked', ${version})`;
    await timeline(1, agent.userId);
    await apply(TOPICS.bookingCreated, e);
    const [first] = (await caller(agent).notifications.list({})).items;
    expect(first!.data).toMatchObject({ objectNumber: '3012', dealTitle: 'Сделка №1019', actorType: 'user', actorId: agent.userId });

    const extensions = [2, 3, 4];
    for (const v of extensions) {
      await timeline(v, manager.userId);
      await apply(TOPICS.bookingExtended, {
        bookingId: e.bookingId, dealId, propertyObjectId: flat.id, tenantId: w.tenantId, createdBy: agent.userId, bookingVersion: v,
        previousBookingExpiresAt: iso(v * 3600_000), bookingExpiresAt: iso((v + 1) * 3600_000),
      });
    }
    // another booking's notice (no such flat or deal anywhere) stays a line of its own, named by what it has
    const other = created(w.tenantId, agent.userId);
    await apply(TOPICS.bookingCreated, other);

    const lines = await caller(agent).notifications.lines({});
    expect(lines.items.map((l) => [l.bookingId, l.type, l.count, l.unreadIds.length, l.read])).toEqual([
      [other.bookingId, 'BookingCreated', 1, 1, false],
      [e.bookingId, 'BookingExtended', 4, 4, false],
    ]);
    expect(lines.items[1]!.data).toMatchObject({ objectNumber: '3012', dealTitle: 'Сделка №1019', actorId: manager.userId });
    expect(lines.items[0]!.data).not.toHaveProperty('objectNumber');
    // reading the line reads its four notices; the list without grouping still has every one
    expect(await caller(agent).notifications.markRead({ ids: lines.items[1]!.unreadIds })).toEqual({ marked: 4 });
    const after = await caller(agent).notifications.lines({ unreadOnly: true });
    expect(after.items.map((l) => l.bookingId)).toEqual([other.bookingId]);
    expect((await caller(agent).notifications.lines({})).items[1]).toMatchObject({ read: true, count: 4, unreadIds: [] });
    expect((await caller(agent).notifications.list({})).items).toHaveLength(5);
    // pages of lines: the cursor is the last line's id
    const page1 = await caller(agent).notifications.lines({ limit: 1 });
    const page2 = await caller(agent).notifications.lines({ limit: 1, cursor: page1.nextCursor });
    expect([...page1.items, ...page2.items].map((l) => l.bookingId)).toEqual([other.bookingId, e.bookingId]);
    expect(page2.nextCursor).toBeNull();
    // another tenant's manager sees no line of it
    const foreign = await insertWorld(t.database, 'Юг');
    const foreignManager = (await insertUser(t.database.db, 'developer_manager', foreign.tenantId)).actor;
    expect((await caller(foreignManager).notifications.lines({})).items).toEqual([]);
  });

  it('a message applied again adds no notice and its notices keep the names; another tenant\'s flat or deal is not named; a deadline-soon notice names the flat and the deal', async () => {
    const w = await insertWorld(t.database, 'Восток');
    const foreign = await insertWorld(t.database, 'Запад');
    const agent = (await insertUser(t.database.db, 'agent', w.tenantId)).actor;
    const flat = await insertObject(t.database, w, { status: 'Free', number: '701' });
    const foreignFlat = await insertObject(t.database, foreign, { status: 'Free', number: '702' });
    const dealId = randomUUID();
    const foreignDealId = randomUUID();
    await t.database.sql`INSERT INTO crm.deals (id, tenant_id, title, status) VALUES (${dealId}, ${w.tenantId}, 'Сделка №701', 'Booking'), (${foreignDealId}, ${foreign.tenantId}, 'Сделка №702', 'Booking')`;
    const e = { ...created(w.tenantId, agent.userId, 10 * 60_000), dealId, propertyObjectId: flat.id };
    await t.database.sql`INSERT INTO crm.booking_timeline (booking_id, tenant_id, actor_type, actor_id, action, to_status, booking_version)
      VALUES (${e.bookingId}, ${w.tenantId}, 'user', ${agent.userId}, 'create', 'Reserved', 1)`;
    const messageId = randomUUID();
    expect(await apply(TOPICS.bookingCreated, e, messageId)).toEqual({ result: 'applied' });
    expect(await apply(TOPICS.bookingCreated, e, messageId)).toMatchObject({ result: 'no-op' });
    const notices = await t.database.sql<{ recipient: string; data: Record<string, unknown> }[]>`
      SELECT recipient, data FROM notifications.notifications WHERE booking_id = ${e.bookingId} ORDER BY recipient`;
    expect(notices.map((n) => n.recipient)).toEqual(['role:developer_manager', `user:${agent.userId}`]);
    for (const n of notices) {
      expect(n.data).toEqual({
        status: 'Reserved', reserveExpiresAt: e.reserveExpiresAt, propertyObjectId: flat.id,
        objectNumber: '701', dealTitle: 'Сделка №701', actorType: 'user', actorId: agent.userId,
      });
    }

    // time, not a person, brings the deadline near: the flat and the deal, no actor
    await createDeadlineSoonJob().run(jobCtx());
    const [soon] = await t.database.sql<{ data: Record<string, unknown> }[]>`
      SELECT data FROM notifications.notifications WHERE booking_id = ${e.bookingId} AND type = 'DeadlineSoon' LIMIT 1`;
    expect(soon!.data).toMatchObject({ phase: 'Reserve', propertyObjectId: flat.id, objectNumber: '701', dealTitle: 'Сделка №701' });
    expect(soon!.data).not.toHaveProperty('actorId');

    // an event of this tenant that names another tenant's flat and deal shows neither name
    const mixed = { ...created(w.tenantId, agent.userId), dealId: foreignDealId, propertyObjectId: foreignFlat.id };
    await apply(TOPICS.bookingCreated, mixed);
    const [m] = await t.database.sql<{ data: Record<string, unknown> }[]>`SELECT data FROM notifications.notifications WHERE booking_id = ${mixed.bookingId} LIMIT 1`;
    expect(m!.data).toEqual({ status: 'Reserved', reserveExpiresAt: mixed.reserveExpiresAt, propertyObjectId: foreignFlat.id });
  });
});
