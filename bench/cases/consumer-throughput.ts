import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Kafka, logLevel, type Message } from 'kafkajs';
import type postgres from 'postgres';
import { createTopics } from '../../scripts/infra/index';
import { crmPropertyObjectStatusConsumer } from '../../server/chessboard/crm-property-object-status.consumer';
import { contracts, eventTypes } from '../../server/contracts';
import type { CrmPayload, CrmTopic } from '../../server/contracts/crm';
import { dealChatConsumer } from '../../server/messenger/deal-chat.consumer';
import { notificationsBookingEventsConsumer } from '../../server/notifications/booking-events.consumer';
import { rewardsBookingEventsConsumer } from '../../server/rewards/booking-events.consumer';
import { toHeaders } from '../../server/platform/kafka/client';
import type { ConsumerDefinition } from '../../server/platform/kafka/consumer-runner';
import { TOPICS, withPrefix } from '../../server/platform/kafka/topics';
import { Agent } from '../lib/agent-client';
import type { BenchCase } from '../lib/context';
import { cpuWindow } from '../lib/cpu';
import { rawClient, settle } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { md5Uuid } from '../lib/stack';
import { median } from '../lib/stats';

/**
 * The messenger (`messenger.deal-chat`), notifications (`notifications.booking-events`) and rewards
 * (`rewards.booking-events`) consumers against the chessboard's (`chessboard.crm-property-object-status`)
 * on the same backlog of about 20,000 crm booking events, in the same run. Each consumer is timed on the
 * events of the topics it subscribes to (booking-paid is not the chessboard's; rewards reads paid and the
 * booking's endings only), realistic booking lives (created → confirmed → extended → sale started; a
 * reserve that expires; cancelled or expired after confirm; a deal cancelled) of distinct deals on
 * distinct Free objects of three tenants, and are produced onto the case's own topics BEFORE anything
 * is timed, so the broker and the producer are outside the window. Then each consumer in turn (order
 * rotated per run; its tables and the chessboard's objects restored, its group deleted, so it starts
 * from offset 0) runs its real definition (server/main/consumers.ts) through the worker's runner
 * (startConsumer: 3 partitions at once, inbox + handler in one transaction, offset commits) in the
 * job-runner child with the worker's pool, until its inbox holds all N.
 *
 * The rate is from the database's own clock: N − 1 over first → last inbox.processed_at (the start
 * of each message's transaction), so the connect and the group join (with the broker's initial
 * rebalance delay for a new group) are not in it; the wall time including them is in the note.
 */

const C = 'consumer-throughput';
const TENANTS = 3;
const PROJECTS_PER_TENANT = 4;
const AGENTS_PER_TENANT = 20;

type Lane = { def: ConsumerDefinition; label: string; inbox: string };
const LANES: Lane[] = [
  { def: crmPropertyObjectStatusConsumer, label: 'chessboard', inbox: 'chessboard.inbox' },
  { def: dealChatConsumer, label: 'messenger', inbox: 'messenger.inbox' },
  { def: notificationsBookingEventsConsumer, label: 'notifications', inbox: 'notifications.inbox' },
  { def: rewardsBookingEventsConsumer, label: 'rewards', inbox: 'rewards.inbox' },
];

const objectName = (i: number) => `bench:consumers:object:${i}`;
const tenantOf = (i: number) => md5Uuid(`bench:consumers:tenant:${i % TENANTS}`);

interface Produced { topic: CrmTopic; key: string; value: string; headers: Record<string, string> }

/**
 * N crm events, booking by booking (booking i: deal i, object i of tenant i % 3), each booking's
 * events with increasing bookingVersion and occurredAt. Lives, by i % 20: 30 % created → confirmed →
 * extended → sale started; 25 % created → reserve expired; 20 % created → confirmed → cancelled;
 * 15 % created → confirmed → booking expired; 10 % created → deal cancelled. Returns the events and how
 * many bookings (= objects) they name.
 */
function crmEvents(n: number): { events: Produced[]; bookings: number } {
  const events: Produced[] = [];
  const t0 = Date.now() - 6 * 3600_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  let i = 0;
  for (; events.length < n; i++) {
    const tenantId = tenantOf(i);
    const bookingId = md5Uuid(`bench:consumers:booking:${i}`);
    const dealId = md5Uuid(`bench:consumers:deal:${i}`);
    const propertyObjectId = md5Uuid(objectName(i));
    const agentId = md5Uuid(`bench:consumers:agent:${i % TENANTS}:${i % AGENTS_PER_TENANT}`);
    const base = { bookingId, dealId, propertyObjectId, tenantId, createdBy: agentId };
    const at = t0 + i * 1000; // one new booking a second
    let version = 0;
    const add = <T extends CrmTopic>(topic: T, occurredAt: number, payload: CrmPayload<T>) => {
      const messageId = md5Uuid(`bench:consumers:message:${i}:${version}`);
      const correlationId = md5Uuid(`bench:consumers:correlation:${i}:${version}`);
      const deal = topic.includes('deal-');
      const envelope = {
        messageId, type: eventTypes[topic], contractVersion: 1, aggregateType: deal ? 'Deal' : 'Booking', aggregateId: deal ? dealId : bookingId,
        occurredAt: iso(occurredAt), tenantId, correlationId, causationId: null, payload,
      };
      // as crm's outbox relay publishes it: key = aggregate id, the envelope's ids in the headers
      events.push({ topic, key: envelope.aggregateId, value: JSON.stringify(envelope), headers: toHeaders({ correlationId, contractVersion: '1', messageId }) });
    };
    add(TOPICS.bookingCreated, at, {
      ...base, bookingVersion: ++version, programId: md5Uuid(`bench:consumers:program:${i % TENANTS}`), status: 'Reserved',
      reserveExpiresAt: iso(at + 24 * 3600_000), createdAt: iso(at), agentId,
    });
    const life = i % 20;
    // the paid programme's lives (sold or cancelled after payment): booking-paid in the confirm's commit, an accrual for rewards
    if (life < 3 || (life >= 11 && life < 13)) {
      add(TOPICS.bookingPaid, at + 600_000, {
        ...base, bookingVersion: ++version, paidAt: iso(at + 600_000), agentId, reward: { kind: 'percent', value: 1.5, price: 10_000_000, amount: 150_000 },
      });
    }
    if (life < 6 || (life >= 11 && life < 18)) {
      add(TOPICS.bookingConfirmed, at + 600_000, { ...base, bookingVersion: ++version, status: 'Booked', bookedAt: iso(at + 600_000), bookingExpiresAt: iso(at + 7 * 86_400_000) });
    }
    if (life < 6) {
      add(TOPICS.bookingExtended, at + 1200_000, { ...base, bookingVersion: ++version, previousBookingExpiresAt: iso(at + 7 * 86_400_000), bookingExpiresAt: iso(at + 14 * 86_400_000) });
      add(TOPICS.dealSaleStarted, at + 1800_000, { ...base, bookingVersion: ++version, startedAt: iso(at + 1800_000) });
    } else if (life < 11) {
      add(TOPICS.bookingExpired, at + 1800_000, { ...base, bookingVersion: ++version, phase: 'Reserve', status: 'ReserveExpired', expiredAt: iso(at + 1800_000), deadline: iso(at + 1700_000) });
    } else if (life < 15) {
      add(TOPICS.bookingCancelled, at + 1800_000, { ...base, bookingVersion: ++version, fromStatus: 'Booked', reason: 'the buyer changed their mind', cancelledAt: iso(at + 1800_000) });
    } else if (life < 18) {
      add(TOPICS.bookingExpired, at + 1800_000, { ...base, bookingVersion: ++version, phase: 'Booking', status: 'BookingExpired', expiredAt: iso(at + 1800_000), deadline: iso(at + 1700_000) });
    } else {
      add(TOPICS.dealCancelled, at + 1800_000, { ...base, bookingVersion: ++version, reason: 'the deal was cancelled', cancelledAt: iso(at + 1800_000) });
    }
  }
  events.length = n; // the last booking's life may be cut short: its events are still valid
  // every event through the shared contract, as the consumer's runner will check it
  for (const e of events) contracts[e.topic].parse(JSON.parse(e.value));
  return { events, bookings: i };
}

/** Projects, buildings and one Free object per booking, in the bench database (as chessboard's import leaves them). */
async function createObjects(sql: postgres.Sql, objects: number): Promise<void> {
  await sql.unsafe(`
    INSERT INTO chessboard.projects (id, tenant_id, name, city, property_objects_free_count, property_objects_total_count)
    SELECT bench.uuid('bench:consumers:project:' || p), bench.uuid('bench:consumers:tenant:' || (p % ${TENANTS})), 'ЖК «Поток ' || p || '»', 'Москва', 0, 0
    FROM generate_series(0, ${TENANTS * PROJECTS_PER_TENANT - 1}) p`);
  await sql.unsafe(`
    INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors)
    SELECT bench.uuid('bench:consumers:building:' || p), bench.uuid('bench:consumers:tenant:' || (p % ${TENANTS})), bench.uuid('bench:consumers:project:' || p), 'Корпус 1', 10, 40
    FROM generate_series(0, ${TENANTS * PROJECTS_PER_TENANT - 1}) p`);
  // object i: tenant i % 3, one of that tenant's projects (project p has tenant p % 3)
  await sql.unsafe(`
    INSERT INTO chessboard.property_objects (id, tenant_id, project_id, building_id, section, floor, number, rooms, area, price, status, status_source, version)
    SELECT bench.uuid('bench:consumers:object:' || i), bench.uuid('bench:consumers:tenant:' || (i % ${TENANTS})),
           bench.uuid('bench:consumers:project:' || p), bench.uuid('bench:consumers:building:' || p),
           1 + (i / ${TENANTS * PROJECTS_PER_TENANT}) % 10, 1 + (i / ${TENANTS * PROJECTS_PER_TENANT * 10}) % 40, i::text, 1 + i % 3, 35 + i % 60, 6000000 + i * 100, 'Free', 'Import', 1
    FROM (SELECT i, i % ${TENANTS} + ${TENANTS} * ((i / ${TENANTS}) % ${PROJECTS_PER_TENANT}) AS p FROM generate_series(0, ${objects - 1}) i) s`);
  await sql.unsafe(`UPDATE chessboard.projects p SET property_objects_free_count = c.n, property_objects_total_count = c.n
    FROM (SELECT project_id, count(*)::int AS n FROM chessboard.property_objects GROUP BY project_id) c WHERE c.project_id = p.id`);
  await sql.unsafe(`CREATE TABLE bench.saved_objects AS SELECT * FROM chessboard.property_objects`);
}

const WRITTEN = [
  'chessboard.inbox', 'chessboard.outbox', 'chessboard.property_object_status_history', 'chessboard.crm_booking_versions', 'chessboard.hold_mismatches',
  'messenger.inbox', 'messenger.deal_chats', 'messenger.messages',
  'notifications.inbox', 'notifications.notifications', 'notifications.reads', 'notifications.hold_deadlines',
  'rewards.inbox', 'rewards.accruals', 'rewards.booking_endings',
];

/** Every table a consumer writes back to its state before the backlog: empty, and every object Free. */
async function restore(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`TRUNCATE ${WRITTEN.join(', ')}, chessboard.property_objects`);
  await sql.unsafe(`INSERT INTO chessboard.property_objects SELECT * FROM bench.saved_objects`);
  await sql.unsafe(`UPDATE chessboard.projects SET aggregates_recalc_requested_at = NULL`);
  await settle(sql, [...WRITTEN, 'chessboard.property_objects', 'chessboard.projects']);
}

async function produce(brokers: string, prefix: string, events: Produced[]): Promise<void> {
  const kafka = new Kafka({ clientId: 'pin-bench', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let k = 0; k < events.length; k += 2000) {
      const byTopic = new Map<string, Message[]>();
      for (const e of events.slice(k, k + 2000)) {
        const topic = withPrefix(prefix, e.topic);
        if (!byTopic.has(topic)) byTopic.set(topic, []);
        byTopic.get(topic)!.push({ key: e.key, value: e.value, headers: e.headers });
      }
      await producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    }
  } finally {
    await producer.disconnect();
  }
}

interface LaneRun { rate: number; wallS: number; outcomes: string; cpu: string }

export const consumerThroughputCase: BenchCase = {
  name: C,
  title: 'messenger, notifications and rewards consumers against the chessboard consumer, same backlog',
  async run(ctx) {
    const n = ctx.scale(20_000);
    const runs = Math.min(ctx.runs, 3);
    const prefix = `benchcons${randomBytes(3).toString('hex')}.`;
    await createTopics(ctx.brokers, prefix);
    const url = await ctx.databases.create('consumers');
    const sql = rawClient(url);
    const results = new Map<string, LaneRun[]>(LANES.map((l) => [l.label, []]));
    const { events, bookings } = crmEvents(n);
    const byTopic = new Map<string, number>();
    for (const e of events) byTopic.set(e.topic, (byTopic.get(e.topic) ?? 0) + 1);
    const mix = [...byTopic].map(([t, k]) => `${k} ${t.replace('pin.crm.', '').replace('.v1', '')}`).join(', ');
    const bytes = events.reduce((s, e) => s + Buffer.byteLength(e.value), 0);
    try {
      ctx.log(`${C}: ${n.toLocaleString('en-US')} crm events of ${bookings} bookings (${mix}; ${Math.round(bytes / n)} B each on average)`);
      await createObjects(sql, bookings);
      await produce(ctx.brokers, prefix, events);
      const agent = await Agent.start('consumers', ctx.workerEnv(url, prefix), path.join(ctx.logDir, 'agent-consumers.log'));
      try {
        for (let r = 0; r <= runs; r++) {
          // the order rotates, so no consumer always runs first (or right after another's writes)
          const order = LANES.map((_, k) => LANES[(k + r) % LANES.length]);
          for (const lane of order) {
            await restore(sql);
            const cpu = cpuWindow();
            // the lane's share of the backlog: the events of the topics it subscribes to
            const laneN = events.filter((e) => (lane.def.topics as string[]).includes(e.topic)).length;
            const { ms, processed } = await agent.consume(lane.def.name, laneN);
            const cpuUse = cpu();
            const [span] = await sql<{ n: number; s: number }[]>`
              SELECT count(*)::int AS n, extract(epoch FROM max(processed_at) - min(processed_at))::float8 AS s
              FROM ${sql(lane.inbox)} WHERE consumer = ${lane.def.name}`;
            if (span.n !== laneN) throw new Error(`${lane.label}: ${span.n} inbox rows, expected ${laneN} (agent saw ${processed})`);
            const outcomes = await sql<{ result: string; k: number }[]>`
              SELECT result, count(*)::int AS k FROM ${sql(lane.inbox)} WHERE consumer = ${lane.def.name} GROUP BY result ORDER BY result`;
            const rate = (laneN - 1) / span.s;
            const run: LaneRun = { rate, wallS: ms / 1000, outcomes: outcomes.map((o) => `${o.k} ${o.result}`).join(', '), cpu: cpuUse.summary };
            ctx.log(`${C}: ${r === 0 ? 'warm-up' : `run ${r}/${runs}`}: ${lane.label} ${laneN} in ${span.s.toFixed(2)} s = ${Math.round(rate)} msg/s (wall ${run.wallS.toFixed(1)} s with connect and join; ${run.outcomes}); ${cpuUse.summary}`);
            if (r > 0) results.get(lane.label)!.push(run);
          }
        }
      } finally {
        await agent.stop();
      }
    } finally {
      await sql.end({ timeout: 5 });
    }

    const chessboard = median(results.get('chessboard')!.map((x) => x.rate));
    return LANES.map((lane): Metric => {
      const xs = results.get(lane.label)!;
      const rate = median(xs.map((x) => x.rate));
      const last = xs.at(-1)!;
      const note = `${lane.def.name}: ${xs.map((x) => Math.round(x.rate)).join(' / ')} msg/s; wall ${xs.map((x) => x.wallS.toFixed(1)).join(' / ')} s`
        + ` (connect + group join included); inbox: ${last.outcomes}; last run ${last.cpu}`
        + (lane.label === 'chessboard' ? `; backlog: ${mix}, ${bookings} bookings on as many objects, ${TENANTS} tenants` : '');
      const base = { case: C, metric: `${lane.label} consumer, ${n.toLocaleString('en-US')} crm events`, unit: 'msg/s', note };
      if (lane.label === 'chessboard') return sampled(base, xs.map((x) => x.rate));
      return sampled({ ...base, ratio: rate / chessboard, ratioLabel: 'of chessboard', budget: '≥ 1.0× chessboard', pass: rate >= chessboard }, xs.map((x) => x.rate));
    });
  },
};
