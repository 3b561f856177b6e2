import { randomUUID } from 'node:crypto';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../auth/actor';
import { bookingOf, crmEnvelope, eventually, OTHER_TENANT, TENANT } from '../../test/fixtures/chessboard.fixtures';
import type { CrmPayload, CrmTopic } from '../contracts/crm';
import { consumerLag } from '../ops/dashboard/kafka-admin';
import { isAppError } from '../platform/errors';
import { dlqTopic, TOPICS, withPrefix } from '../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { readTopics, startBrokerPipeline, type BrokerPipeline } from '../../test/harness/kafka';
import { postMessageCommand } from './commands/post-message';
import { dealChatConsumer } from './deal-chat.consumer';
import { MESSENGER_ERRORS } from './errors';
import { chatOf } from './queries';
import { commandContext } from '../platform/command-context';

/** The deal chat consumer through the real broker: crm outbox → relay → Kafka → startConsumer → messenger. */

let t: TestContext;
let admin: Admin;
let pipe: BrokerPipeline;

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  pipe = await startBrokerPipeline(t, 'crm', dealChatConsumer);
  admin = pipe.kafka.admin();
  await admin.connect();
}, 120_000);

afterAll(async () => {
  await pipe?.close();
  await admin?.disconnect();
  await t?.close();
});

const publishCrm: BrokerPipeline['publishCrm'] = (topic, payload) => pipe.publishCrm(topic, payload);

async function inbox(messageId: string) {
  const rows = await t.database.sql<{ result: string; detail: string | null }[]>`
    SELECT result, detail FROM messenger.inbox WHERE consumer = ${dealChatConsumer.name} AND message_id = ${messageId}`;
  return rows[0];
}
const processed = (messageId: string) => eventually(() => inbox(messageId), 60_000, `inbox row of ${messageId}`);

const cardsOf = (dealId: string) => t.database.sql<{ card_type: string; booking_id: string | null; card: { actions: string[] }; source_message_id: string }[]>`
  SELECT card_type, booking_id, card, source_message_id FROM messenger.messages WHERE deal_id = ${dealId} AND kind = 'card' ORDER BY id`;

const actor = (role: Actor['role'], tenantId: string | null, userId = randomUUID()): Actor => ({ userId, role, tenantId });

describe('messenger.deal-chat through Kafka', () => {
  it('every booking and deal event makes exactly the spec\'s card, with the action it asks for', async () => {
    const agentId = randomUUID();
    const a = bookingOf(randomUUID(), TENANT);
    const b = bookingOf(randomUUID(), TENANT, { dealId: a.dealId });
    const c = bookingOf(randomUUID(), TENANT, { dealId: a.dealId });
    const sent: [string, string][] = [];
    const send = async <T extends CrmTopic>(topic: T, payload: CrmPayload<T>, card: string) => {
      const id = await publishCrm(topic, payload);
      expect(await processed(id)).toMatchObject({ result: 'applied' });
      sent.push([id, card]);
    };
    await send(TOPICS.bookingCreated, { ...a.created(new Date(Date.now() + 3600_000)), agentId }, 'booking-created');
    await send(TOPICS.bookingExpired, a.expired(2, 'Reserve'), 'reserve-expired');
    await send(TOPICS.bookingCreated, b.created(new Date(Date.now() + 3600_000)), 'booking-created');
    await send(TOPICS.bookingConfirmed, b.confirmed(new Date(Date.now() + 86_400_000)), 'booking-confirmed');
    await send(TOPICS.bookingPaid, { bookingId: b.bookingId, dealId: b.dealId, propertyObjectId: randomUUID(), tenantId: TENANT, bookingVersion: 3, paidAt: new Date().toISOString() }, 'booking-paid');
    await send(TOPICS.bookingExtended, b.extended(new Date(Date.now() + 2 * 86_400_000), 4), 'booking-extended');
    await send(TOPICS.bookingExtended, b.extended(new Date(Date.now() + 3 * 86_400_000), 5), 'booking-extended');
    await send(TOPICS.bookingExpired, b.expired(6, 'Booking'), 'booking-expired');
    await send(TOPICS.bookingCreated, c.created(new Date(Date.now() + 3600_000)), 'booking-created');
    await send(TOPICS.bookingCancelled, c.cancelled(2), 'booking-cancelled');
    await send(TOPICS.dealSaleStarted, c.saleStarted(new Date(), 3), 'sale-started');
    await send(TOPICS.dealCancelled, c.dealCancelled(4), 'deal-cancelled');

    const cards = await cardsOf(a.dealId);
    expect(cards.map((r) => [r.source_message_id, r.card_type])).toEqual(sent);
    expect(cards.find((r) => r.card_type === 'booking-created')!.card.actions).toEqual(['confirm']);
    expect(cards.find((r) => r.card_type === 'booking-confirmed')!.card.actions).toEqual(['extend']);
    expect(cards.find((r) => r.card_type === 'booking-paid')!.card.actions).toEqual([]);
    expect(cards.find((r) => r.card_type === 'reserve-expired')!.card.actions).toEqual(['confirm']);
    expect(cards.find((r) => r.card_type === 'booking-expired')!.card.actions).toEqual(['confirm', 'extend']);
    expect(cards.filter((r) => r.card_type === 'booking-created').map((r) => r.booking_id)).toEqual([a.bookingId, b.bookingId, c.bookingId]);
    const [chat] = await t.database.sql`SELECT tenant_id, agent_id FROM messenger.deal_chats WHERE deal_id = ${a.dealId}`;
    expect(chat).toEqual({ tenant_id: TENANT, agent_id: agentId });
  }, 180_000);

  it('a redelivered message and an event re-published under a new messageId add no card', async () => {
    const b = bookingOf(randomUUID());
    const created = b.created(new Date(Date.now() + 3600_000));
    const envelope = crmEnvelope(TOPICS.bookingCreated, created);
    const send = (e: typeof envelope) => pipe.producer.send({
      topic: withPrefix(t.prefix, TOPICS.bookingCreated), acks: -1, messages: [{ key: b.bookingId, value: JSON.stringify(e) }],
    });
    await send(envelope);
    await send(envelope);
    const republished = crmEnvelope(TOPICS.bookingCreated, created); // ops reconciliation: same state, new messageId
    await send(republished);
    expect(await processed(republished.messageId)).toEqual({ result: 'no-op', detail: `card ${b.bookingId}:booking-created already in the chat` });
    expect(await inbox(envelope.messageId)).toMatchObject({ result: 'applied' });
    expect(await cardsOf(b.dealId)).toHaveLength(1);
  }, 90_000);

  it('a poison message goes to the DLQ and the consumer goes on; a deal of another tenant is rejected', async () => {
    const b = bookingOf(randomUUID());
    await pipe.producer.send({ topic: withPrefix(t.prefix, TOPICS.bookingCreated), acks: -1, messages: [{ key: b.bookingId, value: '{"not": "an envelope"' }] });
    // the same deal named again by another tenant: refused (a deal belongs to one tenant), DLQ
    const first = await publishCrm(TOPICS.bookingCreated, b.created(new Date(Date.now() + 3600_000)));
    const foreign = bookingOf(randomUUID(), OTHER_TENANT, { dealId: b.dealId });
    const stolen = await publishCrm(TOPICS.bookingCreated, foreign.created(new Date(Date.now() + 3600_000)));
    const after = await publishCrm(TOPICS.bookingConfirmed, b.confirmed(new Date(Date.now() + 86_400_000)));
    expect(await processed(first)).toMatchObject({ result: 'applied' });
    expect(await processed(stolen)).toEqual({ result: 'rejected', detail: MESSENGER_ERRORS.TENANT_MISMATCH });
    expect(await processed(after)).toMatchObject({ result: 'applied' });
    expect((await cardsOf(b.dealId)).map((r) => r.card_type)).toEqual(['booking-created', 'booking-confirmed']);

    const dlq = await readTopics(pipe.kafka, [withPrefix(t.prefix, dlqTopic(dealChatConsumer.name))], (all) => all.length >= 2, 30_000);
    expect(dlq.map((m) => m.headers['dlq.error.code']).sort()).toEqual(['CONTRACT_INVALID_JSON', MESSENGER_ERRORS.TENANT_MISMATCH]);
  }, 120_000);

  it('replay from offset 0 changes nothing', async () => {
    const before = await t.database.sql`SELECT id, card_key FROM messenger.messages ORDER BY id`;
    const inboxBefore = await t.database.sql`SELECT message_id, result FROM messenger.inbox ORDER BY message_id`;
    expect(before.length).toBeGreaterThan(10);
    await pipe.stop();
    const group = withPrefix(t.prefix, dealChatConsumer.name);
    for (const topic of dealChatConsumer.topics) await admin.resetOffsets({ groupId: group, topic: withPrefix(t.prefix, topic), earliest: true });
    const lagOf = async () => (await consumerLag(t.env)).find((g) => g.group === dealChatConsumer.name)!.lag;
    expect(await lagOf()).toBeGreaterThan(10);
    await pipe.start();
    await eventually(async () => (await lagOf()) === 0, 60_000, 'the replay to reach the end');
    expect(await t.database.sql`SELECT id, card_key FROM messenger.messages ORDER BY id`).toEqual(before);
    expect(await t.database.sql`SELECT message_id, result FROM messenger.inbox ORDER BY message_id`).toEqual(inboxBefore);
  }, 150_000);

  it('tenant isolation: another tenant neither reads nor writes a chat; only participants post', async () => {
    const agentId = randomUUID();
    const b = bookingOf(randomUUID());
    const id = await publishCrm(TOPICS.bookingCreated, { ...b.created(new Date(Date.now() + 3600_000)), agentId });
    await processed(id);
    const db = t.database.db;
    const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (isAppError(e) ? `${e.kind}:${e.code}` : String(e)));

    const own = await chatOf(db, actor('viewer', TENANT), { dealId: b.dealId });
    expect(own.entries.map((e) => e.cardType)).toEqual(['booking-created']);
    expect(own.canPost).toBe(false);
    for (const role of ['viewer', 'agent', 'developer_manager'] as const) {
      expect(await code(chatOf(db, actor(role, OTHER_TENANT), { dealId: b.dealId }))).toBe(`NOT_FOUND:${MESSENGER_ERRORS.CHAT_NOT_FOUND}`);
      expect(await code(db.transaction((tx) => postMessageCommand(tx, { dealId: b.dealId, text: 'hi' }, commandContext(actor(role, OTHER_TENANT)))))).toBe(`NOT_FOUND:${MESSENGER_ERRORS.CHAT_NOT_FOUND}`);
    }
    // an agent of the tenant who is not the deal's agent may read, not post
    expect(await code(db.transaction((tx) => postMessageCommand(tx, { dealId: b.dealId, text: 'hi' }, commandContext(actor('agent', TENANT)))))).toBe(`FORBIDDEN:${MESSENGER_ERRORS.FORBIDDEN}`);
    expect(await code(db.transaction((tx) => postMessageCommand(tx, { dealId: b.dealId, text: '  <b>hi</b>  ' }, commandContext(actor('agent', TENANT, agentId)))))).toBe('ok');
    expect(await code(db.transaction((tx) => postMessageCommand(tx, { dealId: b.dealId, text: 'ok' }, commandContext(actor('developer_manager', TENANT)))))).toBe('ok');
    expect(await code(db.transaction((tx) => postMessageCommand(tx, { dealId: b.dealId, text: 'x'.repeat(2000) }, commandContext(actor('pin_manager', null)))))).toBe('ok');
    for (const text of ['   ', 'x'.repeat(2001)]) {
      expect(await code(db.transaction((tx) => postMessageCommand(tx, { dealId: b.dealId, text }, commandContext(actor('pin_manager', null)))))).toBe(`BAD_REQUEST:${MESSENGER_ERRORS.INVALID_TEXT}`);
    }
    const chat = await chatOf(db, actor('agent', TENANT, agentId), { dealId: b.dealId, limit: 2 });
    expect(chat.canPost).toBe(true);
    expect(chat.entries.map((e) => e.text)).toEqual(['ok', 'x'.repeat(2000)]);
    const older = await chatOf(db, actor('agent', TENANT, agentId), { dealId: b.dealId, limit: 2, before: chat.olderCursor! });
    expect(older.entries.map((e) => e.text ?? e.cardType)).toEqual(['booking-created', '<b>hi</b>']);
    expect(older.olderCursor).toBeNull();
    // pin_manager sees every tenant's chat
    expect((await chatOf(db, actor('pin_manager', null), { dealId: b.dealId })).entries).toHaveLength(4);
  }, 90_000);
  it('the deal\'s investor (named by booking-created) reads its deal\'s chat, whatever the developer; another investor gets NOT_FOUND and neither posts', async () => {
    const investorId = randomUUID();
    const b = bookingOf(randomUUID());
    await processed(await publishCrm(TOPICS.bookingCreated, { ...b.created(new Date(Date.now() + 3600_000)), agentId: randomUUID(), investorId }));
    const db = t.database.db;
    const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (isAppError(e) ? `${e.kind}:${e.code}` : String(e)));
    const chat = await chatOf(db, actor('investor', null, investorId), { dealId: b.dealId });
    expect([chat.entries.map((e) => e.cardType), chat.canPost]).toEqual([['booking-created'], false]);
    expect(await code(chatOf(db, actor('investor', null), { dealId: b.dealId }))).toBe(`NOT_FOUND:${MESSENGER_ERRORS.CHAT_NOT_FOUND}`);
    expect(await code(db.transaction((tx) => postMessageCommand(tx, { dealId: b.dealId, text: 'hi' }, commandContext(actor('investor', null, investorId)))))).toBe(`FORBIDDEN:${MESSENGER_ERRORS.FORBIDDEN}`);
  }, 90_000);
});
