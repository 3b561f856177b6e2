import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Actor } from '../auth/actor';
import { actor, httpCall, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { CONSUMER_GROUPS } from '../contracts/consumer-groups';
import { dlqTopic, TOPICS, withPrefix } from '../platform/kafka/topics';
import { registry } from '../platform/metrics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { eventually, seedChessboard, startBackbone, type Backbone, type SeededChessboard } from '../../test/harness/saga-harness';
import { createContextFor } from '../trpc/context';
import { createCaller } from '../main/app-router';
import { uniqueRequisites } from '../../test/fixtures/profile.fixtures';

/**
 * Personal data never leaves profile in clear. A full paid saga with requisites through the real broker
 * (create set → booking.create with it → reveal for the booking → upload contract → receipt → payment →
 * extend → start sale), plus refused calls carrying the fields, then a scan for EVERY field's clear value
 * in: both outboxes' rows, every message on every topic of the run (Kafka, DLQs included), every log
 * line (the web's and the consumers'), the saga timeline JSON, the /metrics text and every error the
 * client saw. The only place the values may appear is the audited reveal's own answer.
 */

let t: TestContext;
let backbone: Backbone;
let seeded: SeededChessboard;
const TENANT = randomUUID();
const agent = actor('agent', TENANT);
const manager = actor('developer_manager', TENANT);

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  seeded = await seedChessboard(t, TENANT, 2);
  backbone = await startBackbone(t);
  await backbone.startConsumers();
  backbone.startRelay();
  await eventually(async () => {
    const [r] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.property_objects WHERE tenant_id = ${TENANT} AND status = 'Free'`;
    return r!.n === seeded.objectIds.length;
  }, 'crm view of the seeded objects', 60_000);
}, 120_000);

afterAll(async () => {
  await backbone?.close();
  await t?.close();
});

const caller = (who: Actor) => createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, who));

async function allKafkaMessages(): Promise<string[]> {
  const topics = [...Object.values(TOPICS), ...Object.values(CONSUMER_GROUPS).map(dlqTopic)].map((n) => withPrefix(t.prefix, n));
  const existing = new Set(await backbone.admin.listTopics());
  const present = topics.filter((n) => existing.has(n));
  let expected = 0;
  for (const topic of present) for (const p of await backbone.admin.fetchTopicOffsets(topic)) expected += Number(p.high) - Number(p.low);
  const seen: string[] = [];
  const consumer = backbone.kafka.consumer({ groupId: `${t.prefix}no-leak-scan-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: present, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(`${message.key?.toString() ?? ''} ${message.value?.toString() ?? ''} ${JSON.stringify(Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, v?.toString()])))}`);
      },
    });
    await eventually(async () => seen.length >= expected, `all ${expected} Kafka messages of the run`, 60_000);
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

it('no requisite field appears in events, Kafka, logs, the saga timeline, metrics or errors after a full saga run', async () => {
  const fields = uniqueRequisites();
  const errors: string[] = [];
  const program = await insertProgram(t, TENANT, { isPaid: true });
  const deal = await insertDeal(t, TENANT);

  const set = await caller(agent).profile.create({ fields });
  const booking = await caller(agent).booking.create({
    dealId: deal.id, propertyObjectId: seeded.objectIds[0]!, programId: program.id, requisites: { setId: set.id, version: set.version },
  });
  const revealed = await caller(manager).profile.reveal({ reason: 'contract check', setId: set.id, bookingId: booking.id });
  expect(revealed.fields).toEqual(fields);
  await caller(manager).booking.uploadContract({ bookingId: booking.id, document: `contract-${booking.id}.pdf` });
  await caller(manager).booking.uploadReceipt({ bookingId: booking.id, document: `receipt-${booking.id}.pdf` });
  await caller(manager).booking.confirmPayment({ bookingId: booking.id });
  await caller(manager).booking.extend({ bookingId: booking.id, idempotencyKey: randomUUID() });
  await caller(manager).booking.startSale({ bookingId: booking.id });

  // refused calls that carry the fields: a bad value beside good ones, an erase of a set in use (closed now:
  // a second booking holds another set), a reveal by a viewer, an edit with a stale version
  const bad = await httpCall(t, agent, 'profile.create', { fields: { ...fields, inn: '000000000001' } }, 'mutation');
  expect(bad.status).toBe(400);
  errors.push(JSON.stringify(bad.body));
  const second = await caller(agent).profile.create({ fields: uniqueRequisites() });
  const deal2 = await insertDeal(t, TENANT);
  await caller(agent).booking.create({ dealId: deal2.id, propertyObjectId: seeded.objectIds[1]!, programId: program.id, requisites: { setId: second.id, version: 1 } });
  for (const [who, path, input] of [
    [manager, 'profile.erase', { setId: second.id, reason: 'request' }],
    [actor('viewer', TENANT), 'profile.reveal', { reason: 'contract check', setId: set.id }],
    [manager, 'profile.edit', { setId: set.id, expectedVersion: 7, fields }],
    [agent, 'booking.create', { dealId: deal.id, propertyObjectId: seeded.objectIds[1]!, programId: program.id, requisites: { setId: set.id, version: 9 } }],
  ] as const) {
    const res = await httpCall(t, who, path, input, 'mutation');
    expect(res.status, path).toBeGreaterThanOrEqual(400);
    errors.push(JSON.stringify(res.body));
  }

  await backbone.settled(60_000);

  const outboxes = await t.database.sql<{ row: string }[]>`
    SELECT row_to_json(o)::text AS row FROM crm.outbox o UNION ALL SELECT row_to_json(o)::text FROM chessboard.outbox o`;
  expect(outboxes.some((r) => r.row.includes(set.id)), 'booking-created carries the set id').toBe(true);
  const kafka = await allKafkaMessages();
  expect(kafka.some((m) => m.includes(set.id)), 'the set id went through Kafka').toBe(true);
  const logs = [...t.logLines(), ...backbone.consumerLogLines()].map((l) => JSON.stringify(l));
  expect(logs.some((l) => l.includes('requisite set revealed'))).toBe(true);
  const timeline = JSON.stringify(await caller(manager).ops.bookingTimeline({ bookingId: booking.id }));
  expect(timeline).toContain('startSale');
  const metrics = await registry.metrics();
  const bookingById = JSON.stringify(await caller(manager).booking.byId({ bookingId: booking.id }));

  const places: Record<string, string[]> = {
    outbox: outboxes.map((r) => r.row), kafka, logs, timeline: [timeline], metrics: [metrics], errors, 'booking.byId': [bookingById],
  };
  const found: string[] = [];
  for (const [place, texts] of Object.entries(places)) {
    for (const [name, value] of Object.entries(fields)) {
      // the 4- and 6-digit passport parts would match by chance inside uuids, offsets and metric values:
      // they are looked for as a JSON value ("1234") and together (series+number, with or without a space)
      const short = name === 'passportSeries' || name === 'passportNumber';
      const needles = short
        ? [`"${value}"`, `${fields.passportSeries}${fields.passportNumber}`, `${fields.passportSeries} ${fields.passportNumber}`]
        : [value, JSON.stringify(value).slice(1, -1), ...(name === 'phone' ? [value.slice(1)] : [])];
      if (texts.some((text) => needles.some((n) => text.includes(n)))) found.push(`${name} in ${place}`);
    }
  }
  expect(found).toEqual([]);
  // the scan looked at something: every place had content
  for (const [place, texts] of Object.entries(places)) expect(texts.join('').length, place).toBeGreaterThan(0);
}, 180_000);
