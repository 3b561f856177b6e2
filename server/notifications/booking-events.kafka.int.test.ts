import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqTopic, TOPICS, withPrefix } from '../platform/kafka/topics';
import { writeOutbox } from '../platform/outbox/write';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { readTopics, startBrokerPipeline, type BrokerPipeline } from '../../test/harness/kafka';
import { eventually } from '../../test/harness/saga-harness';
import { notificationsBookingEventsConsumer } from './booking-events.consumer';

/** notifications' consumer through the real broker: crm outbox → relay → Kafka → startConsumer → notifications. */

let t: TestContext;
let pipe: BrokerPipeline;

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  pipe = await startBrokerPipeline(t, 'crm', notificationsBookingEventsConsumer);
}, 120_000);

afterAll(async () => {
  await pipe?.close();
  await t?.close();
});

const publishCrm: BrokerPipeline['publishCrm'] = (topic, payload) => pipe.publishCrm(topic, payload);

const inbox = async (messageId: string) => (await t.database.sql<{ result: string; detail: string | null }[]>`
  SELECT result, detail FROM notifications.inbox WHERE consumer = ${notificationsBookingEventsConsumer.name} AND message_id = ${messageId}`)[0];
const processed = (messageId: string) => eventually(() => inbox(messageId), 'inbox row of ' + messageId, 60_000);
const rowsOf = (bookingOrDeal: string) => t.database.sql<{ message_id: string; recipient: string; type: string; tenant_id: string }[]>`
  SELECT message_id, recipient, type, tenant_id FROM notifications.notifications
   WHERE booking_id = ${bookingOrDeal} OR deal_id = ${bookingOrDeal} ORDER BY id`;

const iso = (ms: number) => new Date(Date.now() + ms).toISOString();

function booking(tenantId = randomUUID(), createdBy: string | null = randomUUID()) {
  const base = { bookingId: randomUUID(), dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId };
  return {
    ...base, createdBy,
    created: (v = 1) => ({ ...base, createdBy, bookingVersion: v, programId: randomUUID(), status: 'Reserved' as const, reserveExpiresAt: iso(3600_000), createdAt: iso(0) }),
    confirmed: (v = 2) => ({ ...base, createdBy, bookingVersion: v, status: 'Booked' as const, bookedAt: iso(0), bookingExpiresAt: iso(48 * 3600_000) }),
    paid: (v = 2) => ({ ...base, createdBy, bookingVersion: v, paidAt: iso(0) }),
    extended: (v = 3) => ({ ...base, createdBy, bookingVersion: v, previousBookingExpiresAt: iso(48 * 3600_000), bookingExpiresAt: iso(96 * 3600_000) }),
    expired: (v = 2) => ({ ...base, createdBy, bookingVersion: v, phase: 'Reserve' as const, status: 'ReserveExpired' as const, expiredAt: iso(0), deadline: iso(-1000) }),
    cancelled: (v = 2) => ({ ...base, createdBy, bookingVersion: v, fromStatus: 'Reserved' as const, reason: 'client changed mind', cancelledAt: iso(0) }),
    dealCancelled: (v = 2) => ({ dealId: base.dealId, tenantId, bookingId: base.bookingId, propertyObjectId: base.propertyObjectId, bookingVersion: v, createdBy, reason: 'deal off', cancelledAt: iso(0) }),
    saleStarted: (v = 4) => ({ dealId: base.dealId, tenantId, bookingId: base.bookingId, propertyObjectId: base.propertyObjectId, bookingVersion: v, createdBy, startedAt: iso(0) }),
  };
}

describe('notifications consumer through the real broker', () => {
  it('every booking event → exactly one notification per participant (the creator and the tenant\'s developer managers)', async () => {
    const b = booking();
    const ids = [
      await publishCrm(TOPICS.bookingCreated, b.created(1)),
      await publishCrm(TOPICS.bookingConfirmed, b.confirmed(2)),
      await publishCrm(TOPICS.bookingPaid, b.paid(2)),
      await publishCrm(TOPICS.bookingExtended, b.extended(3)),
      await publishCrm(TOPICS.dealSaleStarted, b.saleStarted(4)),
    ];
    const b2 = booking(b.tenantId);
    ids.push(await publishCrm(TOPICS.bookingCreated, b2.created(1)), await publishCrm(TOPICS.bookingExpired, b2.expired(2)));
    const b3 = booking(b.tenantId);
    ids.push(await publishCrm(TOPICS.bookingCreated, b3.created(1)), await publishCrm(TOPICS.bookingCancelled, b3.cancelled(2)));
    const b4 = booking(b.tenantId);
    ids.push(await publishCrm(TOPICS.bookingCreated, b4.created(1)), await publishCrm(TOPICS.dealCancelled, b4.dealCancelled(2)));
    for (const id of ids) expect(await processed(id)).toEqual({ result: 'applied', detail: null });

    const expectRows = async (x: ReturnType<typeof booking>, types: string[]) => {
      const rows = await rowsOf(x.bookingId);
      expect(rows.map((r) => `${r.type} ${r.recipient}`).sort()).toEqual(
        types.flatMap((ty) => [`${ty} role:developer_manager`, `${ty} user:${x.createdBy}`]).sort());
      expect(new Set(rows.map((r) => r.tenant_id))).toEqual(new Set([b.tenantId]));
    };
    await expectRows(b, ['BookingCreated', 'BookingConfirmed', 'BookingPaid', 'BookingExtended', 'DealSaleStarted']);
    await expectRows(b2, ['BookingCreated', 'BookingExpired']);
    await expectRows(b3, ['BookingCreated', 'BookingCancelled']);
    await expectRows(b4, ['BookingCreated', 'DealCancelled']);

    // the deadline projection follows the events: b ended (sale started), b2/b3/b4 ended too
    const holds = await t.database.sql<{ booking_id: string; ended: boolean; phase: string }[]>`
      SELECT booking_id, ended, phase FROM notifications.hold_deadlines WHERE booking_id IN ${t.database.sql([b.bookingId, b2.bookingId, b3.bookingId, b4.bookingId])}`;
    expect(holds.every((h) => h.ended)).toBe(true);
    expect(holds).toHaveLength(4);
  }, 120_000);

  it('an event without the creator (older producer) reaches the creator remembered from booking-created', async () => {
    const b = booking();
    await processed(await publishCrm(TOPICS.bookingCreated, b.created(1)));
    const { createdBy: _omit, ...confirmed } = b.confirmed(2);
    await processed(await publishCrm(TOPICS.bookingConfirmed, confirmed));
    const rows = await rowsOf(b.bookingId);
    expect(rows.filter((r) => r.type === 'BookingConfirmed').map((r) => r.recipient).sort()).toEqual(['role:developer_manager', `user:${b.createdBy}`]);
  }, 90_000);

  it('a poison event goes to the DLQ and the consumer goes on with the next one', async () => {
    const b = booking();
    const topic = withPrefix(t.prefix, TOPICS.bookingCreated);
    await pipe.producer.send({ topic, acks: -1, messages: [{ key: b.bookingId, value: '{"not":"an envelope"' }] });
    // a contract-valid event whose payload tenant differs from the envelope's: a business rejection
    const foreign = booking();
    const poison = await t.database.db.transaction((tx) => writeOutbox(tx, 'crm', {
      topic: TOPICS.bookingCreated, aggregateType: 'Booking', aggregateId: foreign.bookingId, tenantId: randomUUID(), payload: foreign.created(1), correlationId: randomUUID(),
    }));
    await pipe.relay.drain();
    const next = await publishCrm(TOPICS.bookingCreated, b.created(1));
    expect(await processed(poison)).toEqual({ result: 'rejected', detail: 'NOTIFICATIONS_TENANT_MISMATCH' });
    expect(await processed(next)).toEqual({ result: 'applied', detail: null });
    expect(await rowsOf(foreign.bookingId)).toEqual([]);
    expect(await rowsOf(b.bookingId)).toHaveLength(2);
    const dlq = await readTopics(pipe.kafka, [withPrefix(t.prefix, dlqTopic(notificationsBookingEventsConsumer.name))], (all) => all.length >= 2, 30_000);
    expect(dlq.map((m) => m.headers['dlq.error.code']).sort()).toEqual(['CONTRACT_INVALID_JSON', 'NOTIFICATIONS_TENANT_MISMATCH']);
  }, 90_000);

  it('replay from offset 0 changes nothing (inbox), and re-applying without the inbox adds nothing either (unique per message and recipient)', async () => {
    const b = booking();
    await processed(await publishCrm(TOPICS.bookingCreated, b.created(1)));
    const count = async () => (await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM notifications.notifications`)[0]!.n;
    const before = await count();
    const snapshot = await t.database.sql`SELECT id, message_id, recipient FROM notifications.notifications ORDER BY id`;

    await pipe.stop();
    const admin = pipe.kafka.admin();
    await admin.connect();
    const group = withPrefix(t.prefix, notificationsBookingEventsConsumer.name);
    for (const topic of notificationsBookingEventsConsumer.topics) await admin.resetOffsets({ groupId: group, topic: withPrefix(t.prefix, topic), earliest: true });
    // and the inbox forgotten: the unique (message_id, recipient) still makes the replay a no-op
    await t.database.sql`DELETE FROM notifications.inbox`;
    await pipe.start();
    const ends = async () => {
      let lag = 0;
      for (const topic of notificationsBookingEventsConsumer.topics) {
        const full = withPrefix(t.prefix, topic);
        const high = await admin.fetchTopicOffsets(full);
        const [committed] = await admin.fetchOffsets({ groupId: group, topics: [full] });
        for (const p of high) lag += Number(p.high) - Math.max(0, Number(committed!.partitions.find((c) => c.partition === p.partition)?.offset ?? 0));
      }
      return lag === 0;
    };
    await eventually(ends, 'the replay consumed everything', 60_000, 250);
    await admin.disconnect();
    expect(await count()).toBe(before);
    expect(await t.database.sql`SELECT id, message_id, recipient FROM notifications.notifications ORDER BY id`).toEqual(snapshot);
    const noOps = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM notifications.inbox WHERE result = 'no-op'`;
    expect(noOps[0]!.n).toBeGreaterThan(0);
  }, 120_000);
});
