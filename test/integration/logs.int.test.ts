import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDelistedRetentionJob, DELISTED_RETENTION_LOCK_KEY } from '../../server/catalog/delisted-retention.job';
import { DAY_MS, insertObjectCard } from '../fixtures/catalog.fixtures';
import { bookingOf, crmEnvelope, eventually, insertObjects, insertProject, TENANT, type Place } from '../fixtures/chessboard.fixtures';
import { crmPropertyObjectStatusConsumer } from '../../server/chessboard/crm-property-object-status.consumer';
import { PROPERTY_OBJECT_ERRORS } from '../../server/chessboard/property-object';
import { createPropertyObjectHoldExpirationJob, expirationJobGuard } from '../../server/chessboard/property-object-hold-expiration.job';
import { createBookingExpirationJob } from '../../server/crm/booking-expiration.job';
import { actor, callerFor, insertDeal, insertProgram } from '../fixtures/crm.fixtures';
import { createTestContext, type TestContext } from '../harness/harness';
import { startBrokerPipeline, type BrokerPipeline } from '../harness/kafka';
import { AppError } from '../../server/platform/errors';
import { runJobCycle } from '../../server/platform/jobs/run-log';
import type { JobDefinition } from '../../server/platform/jobs/types';
import { TOPICS, withPrefix } from '../../server/platform/kafka/topics';
import { OutboxRelay } from '../../server/platform/outbox/relay';
import { writeOutbox } from '../../server/platform/outbox/write';
import { projectedObjectOf } from '../harness/crm-projection';

/**
 * The log events of the specs ("Наблюдаемость / Logs") as JSON lines, captured from one cycle of each
 * job, from the consumer runner and from the relay: level, time, msg, service and the event's fields.
 * Last, over every line of this file: no PII (ids and counters only).
 */

type Line = Record<string, unknown>;

let t: TestContext;
let place: Place;
let pipe: BrokerPipeline;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What a person-identifying value looks like, and a few the tests below put into the data on purpose. */
const PII = {
  name: 'Иванов Иван Петрович',
  phone: '+7 (912) 345-67-89',
  email: 'ivan.petrov@example.com',
};

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  place = await insertProject(t.database, TENANT);
  // the project and the tenant carry a person's name: nothing may copy it into a log line
  await t.database.sql`UPDATE chessboard.projects SET name = ${PII.name} WHERE id = ${place.projectId}`;
  pipe = await startBrokerPipeline(t, 'crm', crmPropertyObjectStatusConsumer);
}, 120_000);

afterAll(async () => {
  await pipe?.close();
  await t?.close();
});

const deps = () => ({ database: t.database, env: t.env, logger: t.logger, kafka: pipe.kafka, signal: new AbortController().signal });
const linesOf = (runId: string) => t.logLines().filter((l) => l.runId === runId);
const one = (lines: Line[], msg: string): Line => {
  const found = lines.filter((l) => l.msg === msg);
  expect(found.map((l) => l.msg), `exactly one "${msg}" in ${JSON.stringify(lines.map((l) => l.msg))}`).toEqual([msg]);
  return found[0]!;
};
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

async function runJob(job: JobDefinition) {
  const res = await runJobCycle(job, deps(), 'manual');
  return { ...res, lines: linesOf(res.runId) };
}

describe('job cycles', () => {
  it('property-object-hold-expiration: cycle started, batch selected, WARN lost CRM release, item failed, cycle completed', async () => {
    const [reserved, poison, booked] = await insertObjects(t.database, place, [
      { status: 'Reserved', timer: minutesAgo(20) },
      { status: 'Reserved', timer: minutesAgo(25) },
      { status: 'Booked', timer: minutesAgo(30) },
    ]);
    const job = createPropertyObjectHoldExpirationJob({
      guard: (o) => {
        if (o.id === poison) throw new AppError('TEST_POISON_OBJECT', 'CONFLICT', 'unexpected state');
        return expirationJobGuard(o);
      },
    });
    const { runId, status, lines } = await runJob(job);
    expect(status).toBe('succeeded');
    for (const l of lines) expect(l).toMatchObject({ service: 'test', job: 'property-object-hold-expiration', runId, correlationId: runId, time: expect.stringMatching(ISO) });

    expect(one(lines, 'cycle started')).toMatchObject({ level: 'info', asOf: expect.stringMatching(ISO), holdGraceMs: 600_000, batchSize: 200 });
    const batches = lines.filter((l) => l.msg === 'batch selected');
    expect(batches).toEqual([
      expect.objectContaining({ level: 'info', phase: 'reserved', count: 2, skippedLocked: 0 }),
      expect.objectContaining({ level: 'info', phase: 'booked', count: 1, skippedLocked: 0 }),
    ]);
    const lost = lines.filter((l) => l.msg === 'lost CRM release');
    expect(lost.map((l) => l.propertyObjectId).sort()).toEqual([reserved, booked].sort());
    for (const l of lost) {
      expect(l).toMatchObject({
        level: 'warn', propertyObjectId: expect.stringMatching(UUID), tenantId: TENANT, projectId: place.projectId,
        holdDealId: expect.stringMatching(UUID), fromStatus: expect.stringMatching(/^(Reserved|Booked)$/),
        expiredTimer: expect.stringMatching(/^(ReservedUntil|BookedUntil)$/), expiredTimerAt: expect.stringMatching(ISO),
        overdueByMs: expect.any(Number), messageId: expect.stringMatching(UUID),
      });
      expect(l.overdueByMs as number).toBeGreaterThan(600_000);
    }
    expect(one(lines, 'item failed')).toMatchObject({ level: 'error', propertyObjectId: poison, phase: 'reserved', err: { message: 'unexpected state', code: 'TEST_POISON_OBJECT' } });
    expect(one(lines, 'cycle completed')).toMatchObject({
      level: 'info', reservedReleasedCount: 1, bookedReleasedCount: 1, skippedLocked: 0, errors: 1, durationMs: expect.any(Number),
    });
  });

  it('booking-expiration: cycle started, booking expired, cycle completed; the command\'s line carries the request\'s correlationId', async () => {
    const tenant = randomUUID();
    const deal = await insertDeal(t, tenant);
    const program = await insertProgram(t, tenant);
    const correlationId = randomUUID();
    const booking = await callerFor(t, actor('agent', tenant), correlationId).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, tenant), programId: program.id });
    expect(t.logLines().find((l) => l.msg === 'crm command applied' && l.bookingId === booking.id)).toMatchObject({
      level: 'info', correlationId, command: 'booking.create', dealId: deal.id, status: 'Reserved',
    });
    await t.database.sql`UPDATE crm.bookings SET reserve_expires_at = now() - interval '1 minute' WHERE id = ${booking.id}`;

    const { runId, status, lines } = await runJob(createBookingExpirationJob());
    expect(status).toBe('succeeded');
    expect(one(lines, 'booking-expiration cycle started')).toMatchObject({ level: 'info', correlationId: runId, batchSize: 200 });
    expect(one(lines, 'booking expired')).toMatchObject({
      level: 'info', bookingId: booking.id, dealId: deal.id, propertyObjectId: booking.propertyObjectId, phase: 'Reserve',
      deadline: expect.stringMatching(ISO), bookingVersion: 2, messageId: expect.stringMatching(UUID),
    });
    expect(one(lines, 'booking-expiration cycle completed')).toMatchObject({
      level: 'info', ReserveExpiredCount: 1, BookingExpiredCount: 0, SkippedLockedCount: 0, FailedCount: 0, DurationMs: expect.any(Number),
    });
  });

  it('delisted-retention: started, per-batch (debug), completed; lock skip (warn); batch failure (error with batchIds)', async () => {
    const old = await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 40 * DAY_MS) });
    const done = await runJob(createDelistedRetentionJob());
    expect(done.status).toBe('succeeded');
    const started = done.lines.find((l) => l.event === 'catalog.delisted_retention.started');
    expect(started).toMatchObject({ level: 'info', msg: 'delisted retention started', RunId: done.runId, cutoff: expect.stringMatching(ISO), BatchSize: 2000 });
    expect(done.lines.find((l) => l.event === 'catalog.delisted_retention.batch')).toMatchObject({
      level: 'debug', phase: 'property_object', batchIndex: 1, deletedCards: 1, DeletedPropertyObjectCards: 1,
    });
    expect(done.lines.find((l) => l.event === 'catalog.delisted_retention.completed')).toMatchObject({
      level: 'info', RunId: done.runId, DeletedPropertyObjectCards: 1, DeletedProjectCards: 0, BatchesProcessed: 1, HasMore: false, DurationMs: expect.any(Number),
    });
    expect(old).toMatch(UUID);

    // another instance holds the advisory lock
    const holder = await t.database.sql.reserve();
    try {
      await holder`SELECT pg_advisory_lock(hashtext(${DELISTED_RETENTION_LOCK_KEY}))`;
      const skipped = await runJob(createDelistedRetentionJob());
      expect(skipped.status).toBe('skipped');
      expect(skipped.lines.find((l) => l.event === 'catalog.delisted_retention.skipped_locked')).toMatchObject({
        level: 'warn', RunId: skipped.runId, lockKey: DELISTED_RETENTION_LOCK_KEY,
      });
    } finally {
      await holder`SELECT pg_advisory_unlock(hashtext(${DELISTED_RETENTION_LOCK_KEY}))`;
      holder.release();
    }

    const stuck = await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 40 * DAY_MS) });
    const failed = await runJob(createDelistedRetentionJob({ onBatchLocked: () => { throw new Error('disk full'); } }));
    expect(failed.status).toBe('failed');
    expect(failed.lines.find((l) => l.event === 'catalog.delisted_retention.batch_failed')).toMatchObject({
      level: 'error', RunId: failed.runId, phase: 'property_object', batchIndex: 1, batchIds: [stuck], err: { message: 'disk full' },
    });
    expect(one(failed.lines, 'job cycle failed')).toMatchObject({ level: 'error', err: { message: expect.stringContaining('disk full') } });
  });
});

describe('consumer runner and relay', () => {
  async function publishCrm(payload: ReturnType<ReturnType<typeof bookingOf>['created']>, correlationId: string) {
    const messageId = await t.database.db.transaction((tx) => writeOutbox(tx, 'crm', {
      topic: TOPICS.bookingCreated, aggregateType: 'Booking', aggregateId: payload.bookingId, tenantId: payload.tenantId, payload, correlationId,
    }));
    await pipe.drain();
    return messageId;
  }
  const consumerLine = (messageId: string, msg: string) =>
    eventually(async () => t.logLines().find((l) => l.messageId === messageId && l.msg === msg), 60_000, `"${msg}" of ${messageId}`);

  it('applied: consumer, topic, messageId, correlationId, causationId; relay published (debug)', async () => {
    const [id] = await insertObjects(t.database, place, [{ status: 'Free' }]);
    const correlationId = randomUUID();
    const messageId = await publishCrm(bookingOf(id!).created(new Date(Date.now() + 3600_000)), correlationId);
    const relayLine = t.logLines().filter((l) => l.msg === 'relay published').at(-1);
    expect(relayLine).toMatchObject({ level: 'debug', outbox: 'crm', count: expect.any(Number), firstId: expect.any(String), lastId: expect.any(String) });

    expect(await consumerLine(messageId, 'consumer applied')).toMatchObject({
      level: 'debug', service: 'test', consumer: crmPropertyObjectStatusConsumer.name, topic: TOPICS.bookingCreated,
      correlationId, causationId: null, aggregateId: expect.stringMatching(UUID), result: 'applied', time: expect.stringMatching(ISO),
    });
  }, 90_000);

  it('no-op: a redelivered messageId is logged as a no-op (duplicate)', async () => {
    const [id] = await insertObjects(t.database, place, [{ status: 'Free' }]);
    const b = bookingOf(id!);
    const messageId = randomUUID();
    const correlationId = randomUUID();
    const envelope = crmEnvelope(TOPICS.bookingCreated, b.created(new Date(Date.now() + 3600_000)), { messageId, correlationId });
    for (let i = 0; i < 2; i++) {
      await pipe.producer.send({ topic: withPrefix(t.prefix, TOPICS.bookingCreated), acks: -1, messages: [{ key: b.bookingId, value: JSON.stringify(envelope) }] });
    }
    await consumerLine(messageId, 'consumer applied');
    expect(await consumerLine(messageId, 'consumer no-op')).toMatchObject({ level: 'debug', result: 'duplicate', correlationId });
  }, 90_000);

  it('mismatch: WARN INV-CHS-003 hold mismatch and WARN rejected to the DLQ with the code', async () => {
    const holderDeal = randomUUID();
    const [id] = await insertObjects(t.database, place, [{ status: 'Reserved', holdDealId: holderDeal, timer: new Date(Date.now() + 3600_000) }]);
    // the hold was taken after the intruder's create (DESIGN decision 7 moves only an OLDER hold)
    await t.database.sql`UPDATE chessboard.property_objects SET status_changed_at = now() + interval '1 hour' WHERE id = ${id!}`;
    const intruder = bookingOf(id!);
    const correlationId = randomUUID();
    const messageId = await publishCrm(intruder.created(new Date(Date.now() + 3600_000)), correlationId);
    expect(await consumerLine(messageId, 'INV-CHS-003 hold mismatch')).toMatchObject({
      level: 'warn', code: PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH, propertyObjectId: id, bookingId: intruder.bookingId, dealId: intruder.dealId,
      holdDealId: holderDeal, correlationId,
    });
    expect(await consumerLine(messageId, 'consumer rejected message to DLQ')).toMatchObject({
      level: 'warn', code: PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH, consumer: crmPropertyObjectStatusConsumer.name, correlationId,
    });
  }, 90_000);

  it('DLQ: a message that is not JSON is logged with its code, topic, partition and offset', async () => {
    const key = randomUUID();
    await pipe.producer.send({ topic: withPrefix(t.prefix, TOPICS.bookingCancelled), acks: -1, messages: [{ key, value: 'not json {' }] });
    const line = await eventually(async () => t.logLines().find((l) => l.msg === 'consumer message sent to DLQ' && l.code === 'CONTRACT_INVALID_JSON'), 60_000, 'DLQ line');
    expect(line).toMatchObject({ level: 'warn', consumer: crmPropertyObjectStatusConsumer.name, topic: TOPICS.bookingCancelled, partition: expect.any(Number), offset: expect.any(String) });
  }, 90_000);

  it('relay publish failed: ERROR with the outbox, the batch and the broker error', async () => {
    const projectId = randomUUID();
    await t.database.db.transaction((tx) => writeOutbox(tx, 'chessboard', {
      topic: TOPICS.projectDeleted, aggregateType: 'Project', aggregateId: projectId, tenantId: TENANT, correlationId: randomUUID(),
      payload: { projectId, tenantId: TENANT, deletedAt: new Date().toISOString() },
    }));
    const broken = new OutboxRelay('chessboard', {
      database: t.database, env: t.env, logger: t.logger,
      producer: { sendBatch: async () => { throw new Error('Connection error: ECONNREFUSED'); } } as unknown as Producer,
    });
    try {
      const s = await broken.drain();
      expect(s.failed).toBeGreaterThan(0);
    } finally {
      await broken.release();
    }
    expect(t.logLines().filter((l) => l.msg === 'relay publish failed').at(-1)).toMatchObject({
      level: 'error', outbox: 'chessboard', count: expect.any(Number), firstId: expect.any(String), err: { message: 'Connection error: ECONNREFUSED' },
    });
  });
});

describe('no PII in log lines', () => {
  it('a booking whose deal, project and cancel reason carry a name, a phone and an e-mail: none of them is logged', async () => {
    const [id] = await insertObjects(t.database, place, [{ status: 'Free' }]);
    const deal = await insertDeal(t, TENANT);
    await t.database.sql`UPDATE crm.deals SET title = ${`${PII.name}, ${PII.phone}, ${PII.email}`} WHERE id = ${deal.id}`;
    const program = await insertProgram(t, TENANT);
    const agent = actor('agent', TENANT);
    const booking = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: id!, programId: program.id });
    await callerFor(t, agent).booking.cancel({ bookingId: booking.id, reason: `client ${PII.name} asked by phone ${PII.phone}, ${PII.email}` });
    await pipe.drain();
    // the cancel (with its free-text reason) went through Kafka to the consumer and was applied
    const cancelled = await t.database.sql<{ message_id: string }[]>`SELECT message_id FROM crm.outbox WHERE aggregate_id = ${booking.id} AND topic = ${TOPICS.bookingCancelled}`;
    await eventually(async () => t.logLines().find((l) => l.messageId === cancelled[0]!.message_id && /^consumer (applied|no-op)$/.test(String(l.msg))), 60_000, 'cancel consumed');

    const lines = t.logLines();
    expect(lines.length).toBeGreaterThan(30);
    const keys = new Set<string>();
    const collectKeys = (v: unknown) => {
      if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { keys.add(k.toLowerCase()); collectKeys(x); }
    };
    for (const line of lines) {
      // every line: level, time, msg, service
      expect(line).toMatchObject({ level: expect.stringMatching(/^(trace|debug|info|warn|error|fatal)$/), time: expect.stringMatching(ISO), msg: expect.any(String), service: 'test' });
      collectKeys(line);
      const text = JSON.stringify(line);
      for (const value of Object.values(PII)) expect(text, `PII "${value}" in ${text}`).not.toContain(value);
      expect(text).not.toMatch(/Иван|Петрович|example\.com/);
      // anything e-mail- or phone-like (ids, timestamps and hex removed first)
      const rest = text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '')
        .replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z/g, '');
      expect(rest, text).not.toMatch(/[\w.+-]+@[\w-]+\.[a-z]{2,}/i);
      expect(rest, text).not.toMatch(/\+?\d[\s(]*\d{3}[\s)]*\d{3}[\s-]+\d{2}[\s-]+\d{2}/);
    }
    const personal = ['email', 'phone', 'name', 'firstname', 'lastname', 'fullname', 'title', 'clientname', 'address'];
    expect([...keys].filter((k) => personal.includes(k))).toEqual([]);
  }, 90_000);
});
