import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { insertTenant, insertTenantWorld, insertUser, type TenantWorld } from '../../test/fixtures/auth.fixtures';
import type { Actor } from '../auth/actor';
import { bookingPrograms, bookings, bookingTimeline, crmOutbox, deals } from '../crm/schema';
import { chessboardInbox, chessboardOutbox, holdReleases } from '../chessboard/schema';
import { messengerInbox } from '../messenger/schema';
import { catalogInbox } from '../catalog/schema';
import { notificationsInbox } from '../notifications/schema';
import { rewardsInbox } from '../rewards/schema';
import { TOPICS } from '../platform/kafka/topics';
import { getSagaTimeline, type SagaChain } from './saga-timeline';

let t: TestContext;
let world: TenantWorld;
let manager: Actor;
let foreign: Actor;
let ops: Actor;

const T0 = new Date('2030-05-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

beforeAll(async () => {
  t = await createTestContext();
  const db = t.database.db;
  world = await insertTenantWorld(db, await insertTenant(db));
  manager = (await insertUser(db, 'developer_manager', world.tenantId)).actor;
  foreign = (await insertUser(db, 'developer_manager', await insertTenant(db))).actor;
  ops = (await insertUser(db, 'ops', null)).actor;
});
afterAll(async () => {
  await t?.close();
});

/** Each booking gets an object of its own (INV-BKG-001: one active booking per object). */
async function insertBooking() {
  const db = t.database.db;
  world = await insertTenantWorld(db, world.tenantId);
  const dealId = randomUUID();
  const programId = randomUUID();
  const bookingId = randomUUID();
  await db.insert(deals).values({ id: dealId, tenantId: world.tenantId, title: 'Deal', status: 'Booking' });
  await db.insert(bookingPrograms).values({ id: programId, tenantId: world.tenantId, name: 'Free' });
  await db.insert(bookings).values({
    id: bookingId, tenantId: world.tenantId, dealId, propertyObjectId: world.objectIds.reserved, programId, status: 'Reserved',
    reserveExpiresAt: at(3600_000), paymentStatus: 'NotRequired', createdAt: T0, updatedAt: T0,
  });
  return { bookingId, dealId };
}

async function crmMessage(bookingId: string, topic: string, createdAt: Date, publishedAt: Date | null) {
  const messageId = randomUUID();
  await t.database.db.insert(crmOutbox).values({
    messageId, topic, key: bookingId, aggregateType: 'Booking', aggregateId: bookingId,
    payload: { messageId, causationId: null, correlationId: randomUUID(), payload: { bookingId } }, createdAt, publishedAt,
  });
  return messageId;
}

async function statusChanged(causationId: string | null, createdAt: Date, publishedAt: Date | null, messageId = randomUUID()) {
  await t.database.db.insert(chessboardOutbox).values({
    messageId, topic: TOPICS.propertyObjectStatusChanged, key: world.objectIds.reserved, aggregateType: 'PropertyObject',
    aggregateId: world.objectIds.reserved, payload: { messageId, causationId, payload: { toStatus: 'Reserved' } }, createdAt, publishedAt,
  });
  return messageId;
}

const states = (chain: SagaChain) => chain.hops.map((h) => `${h.kind}:${h.state}`);

describe('saga timeline of a booking', () => {
  it('joins every hop by messageId/causationId with latencies, and reports pending hops until they happen', async () => {
    const db = t.database.db;
    const { bookingId } = await insertBooking();
    const created = await crmMessage(bookingId, TOPICS.bookingCreated, at(5), at(40));
    await db.insert(bookingTimeline).values({
      bookingId, tenantId: world.tenantId, at: T0, actorType: 'user', actorId: manager.userId, action: 'create',
      fromStatus: null, toStatus: 'Reserved', messageIds: [created], bookingVersion: 1,
    });
    await db.insert(chessboardInbox).values({ consumer: 'chessboard.crm-property-object-status', messageId: created, topic: TOPICS.bookingCreated, processedAt: at(140), result: 'applied' });
    const changed = await statusChanged(created, at(140), null);

    const pending = await getSagaTimeline(db, manager, bookingId);
    expect(pending.steps).toHaveLength(1);
    const step = pending.steps[0];
    expect(step.command).toMatchObject({ action: 'create', toStatus: 'Reserved', actorName: 'developer_manager user' });
    const chain = step.chains[0];
    expect(chain.messageId).toBe(created);
    expect(states(chain)).toEqual([
      'crm_outbox_written:done', 'crm_published:done', 'chessboard_applied:done',
      'chessboard_outbox_written:done', 'chessboard_published:pending', 'catalog_applied:skipped', 'messenger_applied:pending',
    ]);
    expect(chain.hops.map((h) => h.latencyMs)).toEqual([5, 35, 100, 0, null, null, null]);
    expect(pending.hasPending).toBe(true);

    await db.update(chessboardOutbox).set({ publishedAt: at(160) }).where(eq(chessboardOutbox.messageId, changed));
    const waitingForCatalog = await getSagaTimeline(db, manager, bookingId);
    expect(states(waitingForCatalog.steps[0].chains[0]).slice(-3, -1)).toEqual(['chessboard_published:done', 'catalog_applied:pending']);

    await db.insert(catalogInbox).values({ consumer: 'catalog.card-projection', messageId: changed, topic: TOPICS.propertyObjectStatusChanged, processedAt: at(200), result: 'applied' });
    // the deal chat's card of the same crm message: its latency counts from the publication (a parallel consumer)
    await db.insert(messengerInbox).values({ consumer: 'messenger.deal-chat', messageId: created, topic: TOPICS.bookingCreated, processedAt: at(70), result: 'applied' });
    const complete = await getSagaTimeline(db, manager, bookingId);
    const hops = complete.steps[0].chains[0].hops;
    expect(hops.find((h) => h.kind === 'catalog_applied')).toMatchObject({ state: 'done', latencyMs: 40, detail: 'applied' });
    expect(hops.at(-1)).toMatchObject({ kind: 'messenger_applied', state: 'done', latencyMs: 30, detail: 'applied' });
    expect(complete.hasPending).toBe(false);
    expect(complete.hasFailures).toBe(false);
  });

  it('shows an unpublished message as pending, a rejected one (hold mismatch → DLQ) as failed, and booking-paid as not consumed by chessboard', async () => {
    const db = t.database.db;
    const { bookingId } = await insertBooking();
    const unpublished = await crmMessage(bookingId, TOPICS.bookingCreated, at(10), null);
    const rejected = await crmMessage(bookingId, TOPICS.bookingConfirmed, at(20), at(30));
    const paid = await crmMessage(bookingId, TOPICS.bookingPaid, at(20), at(30));
    await db.insert(bookingTimeline).values([
      { bookingId, tenantId: world.tenantId, at: at(0), actorType: 'user', actorId: manager.userId, action: 'create', toStatus: 'Reserved', messageIds: [unpublished], bookingVersion: 1 },
      { bookingId, tenantId: world.tenantId, at: at(15), actorType: 'user', actorId: manager.userId, action: 'confirmPayment', fromStatus: 'AwaitingPayment', toStatus: 'Booked', messageIds: [paid, rejected], bookingVersion: 3 },
    ]);
    await db.insert(chessboardInbox).values({ consumer: 'chessboard.crm-property-object-status', messageId: rejected, topic: TOPICS.bookingConfirmed, processedAt: at(50), result: 'rejected', detail: 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH' });

    const timeline = await getSagaTimeline(db, manager, bookingId);
    const [create, confirm] = timeline.steps;
    expect(states(create.chains[0]).slice(0, 3)).toEqual(['crm_outbox_written:done', 'crm_published:pending', 'chessboard_applied:skipped']);
    const paidChain = confirm.chains.find((c) => c.messageId === paid)!;
    expect(paidChain.hops.find((h) => h.kind === 'chessboard_applied')).toMatchObject({ state: 'skipped', detail: 'not-consumed' });
    // booking-paid is the messenger's ("договор оплачен"): its hop is expected; an unpublished message's is not
    expect(paidChain.hops.at(-1)).toMatchObject({ kind: 'messenger_applied', state: 'pending' });
    expect(create.chains[0].hops.at(-1)).toMatchObject({ kind: 'messenger_applied', state: 'skipped' });
    const rejectedChain = confirm.chains.find((c) => c.messageId === rejected)!;
    expect(rejectedChain.hops.find((h) => h.kind === 'chessboard_applied')).toMatchObject({ state: 'failed', detail: 'rejected:CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH' });
    expect(timeline.hasFailures).toBe(true);
    expect(timeline.hasPending).toBe(true);
  });

  it('includes a safety-net release of the booking hold with its status-changed event', async () => {
    const db = t.database.db;
    const { bookingId, dealId } = await insertBooking();
    const releaseMessage = randomUUID();
    await db.insert(holdReleases).values({
      propertyObjectId: world.objectIds.reserved, tenantId: world.tenantId, projectId: world.projectId, holdDealId: dealId,
      fromStatus: 'Reserved', statusSource: 'ExpirationJob', messageId: releaseMessage, releasedAt: at(7200_000), runId: randomUUID(),
    });
    await statusChanged(null, at(7200_000), at(7200_050), releaseMessage);
    const timeline = await getSagaTimeline(db, ops, bookingId);
    const release = timeline.steps.find((s) => s.key.startsWith('release:'))!;
    expect(states(release.chains[0])).toEqual(['safety_net_release:done', 'chessboard_outbox_written:done', 'chessboard_published:done', 'catalog_applied:pending']);
    expect(release.chains[0].hops[0].detail).toBe('ExpirationJob:Reserved');
    expect(release.release).toMatchObject({ source: 'ExpirationJob', actorId: null, actorName: null });
  });

  it('names a release by hand by its source and the person who did it, with the reason', async () => {
    const db = t.database.db;
    const { bookingId, dealId } = await insertBooking();
    const releaseMessage = randomUUID();
    await db.insert(holdReleases).values({
      propertyObjectId: world.objectIds.reserved, tenantId: world.tenantId, projectId: world.projectId, holdDealId: dealId,
      fromStatus: 'Reserved', statusSource: 'Manual', messageId: releaseMessage, releasedAt: at(7200_000), actorId: manager.userId, reason: 'stuck hold',
    });
    const release = (await getSagaTimeline(db, ops, bookingId)).steps.find((s) => s.key.startsWith('release:'))!;
    expect(release.release).toEqual({ source: 'Manual', actorId: manager.userId, actorName: expect.any(String), reason: 'stuck hold', at: at(7200_000) });
    expect(release.release!.actorName!.length).toBeGreaterThan(0);
  });

  it('says when no integration event of the booking is on record (imported, or pruned) — and not when there is one', async () => {
    const db = t.database.db;
    const { bookingId } = await insertBooking();
    await db.insert(bookingTimeline).values({
      bookingId, tenantId: world.tenantId, at: T0, actorType: 'user', actorId: manager.userId, action: 'create',
      fromStatus: null, toStatus: 'Reserved', messageIds: [], bookingVersion: 1,
    });
    const imported = await getSagaTimeline(db, manager, bookingId);
    expect(imported.steps).toHaveLength(1);
    expect(imported.steps[0].chains).toEqual([]);
    expect(imported.eventsOnRecord).toBe(false);

    await crmMessage(bookingId, TOPICS.bookingConfirmed, at(60_000), null);
    expect((await getSagaTimeline(db, manager, bookingId)).eventsOnRecord).toBe(true);
  });

  it('lists the steps in version order even when the clocks disagree (v3 written by a replica whose clock is behind)', async () => {
    const db = t.database.db;
    const { bookingId } = await insertBooking();
    await db.insert(bookingTimeline).values([
      { bookingId, tenantId: world.tenantId, at: at(0), actorType: 'user', actorId: manager.userId, action: 'create', fromStatus: null, toStatus: 'Reserved', messageIds: [], bookingVersion: 1 },
      { bookingId, tenantId: world.tenantId, at: at(20), actorType: 'user', actorId: manager.userId, action: 'confirm', fromStatus: 'Reserved', toStatus: 'Booked', messageIds: [], bookingVersion: 2 },
      { bookingId, tenantId: world.tenantId, at: at(10), actorType: 'user', actorId: manager.userId, action: 'cancel', fromStatus: 'Booked', toStatus: 'Cancelled', messageIds: [], bookingVersion: 3 },
    ]);
    const timeline = await getSagaTimeline(db, manager, bookingId);
    expect(timeline.steps.map((s) => s.command?.bookingVersion)).toEqual([1, 2, 3]);
  });

  it('names a divergence once nothing is in flight: an active booking whose object is not held by it, an ended one still holding it', async () => {
    const db = t.database.db;
    const { bookingId, dealId } = await insertBooking();
    const objectId = world.objectIds.reserved;
    // the object is free in the chessboard (released by hand), the crm booking still Reserved
    await t.database.sql`UPDATE chessboard.property_objects SET status = 'Free', reserved_until = NULL, booked_until = NULL, hold_deal_id = NULL, hold_booking_id = NULL WHERE id = ${objectId}`;
    expect((await getSagaTimeline(db, manager, bookingId)).divergence).toEqual({ kind: 'booking_not_held', objectStatus: 'Free', holdBookingId: null });
    // while an event of the booking is still pending, it is "in progress", not a divergence
    const pending = await crmMessage(bookingId, TOPICS.bookingCreated, at(5), null);
    expect((await getSagaTimeline(db, manager, bookingId)).divergence).toBeNull();
    await t.database.sql`DELETE FROM crm.outbox WHERE message_id = ${pending}`;
    // held by this booking: they agree
    await t.database.sql`UPDATE chessboard.property_objects SET status = 'Reserved', reserved_until = ${at(3600_000).toISOString()}::timestamptz, hold_deal_id = ${dealId}, hold_booking_id = ${bookingId} WHERE id = ${objectId}`;
    expect((await getSagaTimeline(db, manager, bookingId)).divergence).toBeNull();
    // the booking ended in crm, the chessboard still holds the object for it
    await db.update(bookings).set({ status: 'Cancelled' }).where(eq(bookings.id, bookingId));
    expect((await getSagaTimeline(db, manager, bookingId)).divergence).toEqual({ kind: 'still_held', objectStatus: 'Reserved', holdBookingId: bookingId });
  });

  it('a booking of another tenant is NOT_FOUND', async () => {
    const { bookingId } = await insertBooking();
    await expect(getSagaTimeline(t.database.db, foreign, bookingId)).rejects.toMatchObject({ kind: 'NOT_FOUND', code: 'CRM_BOOKING_NOT_FOUND' });
    await expect(getSagaTimeline(t.database.db, ops, bookingId)).resolves.toBeTruthy();
  });
});

describe('saga timeline: the notifications hop (#20)', () => {
  it('each crm message shows notifications as a participant hop with its latency from the publication; pending until its inbox row', async () => {
    const db = t.database.db;
    const { bookingId } = await insertBooking();
    const created = await crmMessage(bookingId, TOPICS.bookingCreated, at(5), at(40));
    await db.insert(bookingTimeline).values({
      bookingId, tenantId: world.tenantId, at: T0, actorType: 'user', actorId: manager.userId, action: 'create',
      fromStatus: null, toStatus: 'Reserved', messageIds: [created], bookingVersion: 1,
    });
    const before = await getSagaTimeline(db, manager, bookingId);
    // rewards does not read booking-created: its hop says so rather than waiting
    expect(before.steps[0]!.chains[0]!.participants).toMatchObject([
      { kind: 'notifications_applied', state: 'pending', latencyMs: null }, { kind: 'rewards_applied', state: 'skipped', detail: 'not-consumed' },
    ]);
    await db.insert(notificationsInbox).values({ consumer: 'notifications.booking-events', messageId: created, topic: TOPICS.bookingCreated, processedAt: at(95), result: 'applied' });
    const after = await getSagaTimeline(db, manager, bookingId);
    expect(after.steps[0]!.chains[0]!.participants).toMatchObject([
      { kind: 'notifications_applied', state: 'done', latencyMs: 55, detail: 'applied' }, { kind: 'rewards_applied', state: 'skipped' },
    ]);
  });
});

describe('saga timeline: the rewards hop', () => {
  it('booking-paid shows rewards as a participant: pending until its inbox row, then done with its latency from the publication', async () => {
    const db = t.database.db;
    const { bookingId } = await insertBooking();
    const paid = await crmMessage(bookingId, TOPICS.bookingPaid, at(5), at(40));
    await db.insert(bookingTimeline).values({
      bookingId, tenantId: world.tenantId, at: T0, actorType: 'user', actorId: manager.userId, action: 'confirm-payment',
      fromStatus: 'AwaitingPayment', toStatus: 'Booked', messageIds: [paid], bookingVersion: 4,
    });
    const rewardsOf = async () => (await getSagaTimeline(db, manager, bookingId)).steps[0]!.chains[0]!.participants!.find((p) => p.kind === 'rewards_applied');
    expect(await rewardsOf()).toMatchObject({ state: 'pending', latencyMs: null });
    await db.insert(rewardsInbox).values({ consumer: 'rewards.booking-events', messageId: paid, topic: TOPICS.bookingPaid, processedAt: at(100), result: 'applied' });
    expect(await rewardsOf()).toMatchObject({ state: 'done', latencyMs: 60, detail: 'applied' });
  });

  it('an investor follows the timeline of a booking of its own deal; another investor\'s booking is NOT_FOUND', async () => {
    const { bookingId, dealId } = await insertBooking();
    const investor: Actor = { userId: randomUUID(), role: 'investor', tenantId: null };
    await expect(getSagaTimeline(t.database.db, investor, bookingId)).rejects.toMatchObject({ kind: 'NOT_FOUND', code: 'CRM_BOOKING_NOT_FOUND' });
    await t.database.db.update(deals).set({ investorId: investor.userId }).where(eq(deals.id, dealId));
    await expect(getSagaTimeline(t.database.db, investor, bookingId)).resolves.toMatchObject({ booking: { id: bookingId } });
  });
});
