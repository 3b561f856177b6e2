import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contracts } from '../contracts';
import { createJobs } from '../main/jobs';
import { runJobCycle } from '../platform/jobs/run-log';
import { TOPICS } from '../platform/kafka/topics';
import { registry } from '../platform/metrics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { bookingExpirationJob, createBookingExpirationJob, type BookingExpirationSummary } from './booking-expiration.job';
import { confirmBookingCommand } from './commands/confirm-booking';
import { createBookingCommand } from './commands/create-booking';
import { uploadContractCommand } from './commands/upload-contract';
import { actor, bookingRow, callerFor, dealRow, httpCall, insertDeal, insertProgram, jobContext, outboxOf, timelineOf } from '../../test/fixtures/crm.fixtures';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { seedRequisiteSet } from '../../test/fixtures/profile.fixtures';
import { commandContext } from '../platform/command-context';

/**
 * booking-expiration on real PostgreSQL (INV-BKG-5): phases, batching, SKIP LOCKED, idempotency by
 * state, and the race with confirm/extend (exactly one transition and one event wins).
 */

const TENANT = randomUUID();
const agent = actor('agent', TENANT);
const manager = actor('developer_manager', TENANT);
const MIN = 60_000;
const HOUR = 3_600_000;

async function metricValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  const match = values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return match?.value ?? 0;
}

/** A booking created by the command at a chosen time (so its deadlines are known exactly). */
async function bookingAt(t: TestContext, program: { id: string }, createdAt: Date, dealId?: string) {
  const deal = dealId ? { id: dealId } : await insertDeal(t, TENANT);
  const objectId = await projectedObjectOf(t.database, TENANT);
  return t.database.db.transaction((tx) =>
    createBookingCommand(tx, { dealId: deal.id, propertyObjectId: objectId, programId: program.id }, commandContext(agent, randomUUID(), createdAt)),
  );
}

const run = (t: TestContext, now: Date, env: Partial<TestContext['env']> = {}, signal?: AbortSignal) =>
  createBookingExpirationJob({ now: () => now }).run({ ...jobContext(t, signal), env: { ...t.env, ...env } }) as Promise<BookingExpirationSummary>;

describe('booking-expiration cycle', () => {
  let t: TestContext;
  let free: { id: string };
  let paid: { id: string };
  const T0 = new Date('2030-01-01T12:00:00.000Z');

  // a fresh database per test: a cycle scans every due booking, so no test sees another's leftovers
  beforeEach(async () => {
    t = await createTestContext();
    free = await insertProgram(t, TENANT, { reserveDurationMinutes: 60, bookingDurationHours: 48 });
    paid = await insertProgram(t, TENANT, { isPaid: true, reserveDurationMinutes: 60, bookingDurationHours: 48 });
  });
  afterEach(async () => {
    await t?.close();
  });

  it('is registered under its fixed name with the env schedule in UTC', () => {
    expect(createJobs()['booking-expiration']).toBe(bookingExpirationJob);
    expect(bookingExpirationJob.name).toBe('booking-expiration');
    expect(bookingExpirationJob.schedule({ ...t.env, BOOKING_EXPIRATION_SCHEDULE: '15 * * * * *' })).toEqual({ cron: '15 * * * * *', timezone: 'UTC' });
  });

  it('INV-BKG-5: expires Reserved/AwaitingPayment past ReserveExpiresAt and Booked past BookingExpiresAt, with phase, deal projection, timeline, metrics and logs', async () => {
    const reserved = await bookingAt(t, free, T0); // reserve deadline T0+60m
    const awaiting = await bookingAt(t, paid, T0);
    const requisites = await seedRequisiteSet(t, manager);
    await t.database.db.transaction((tx) =>
      uploadContractCommand(tx, { bookingId: awaiting.id, document: 'files/c.pdf', requisites: { setId: requisites.id, version: 1 } }, commandContext(manager, randomUUID(), new Date(T0.getTime() + MIN))),
    );
    const booked = await bookingAt(t, free, new Date(T0.getTime() - 48 * HOUR)); // booked at T0-48h+1m → booking deadline T0+1m
    await t.database.db.transaction((tx) =>
      confirmBookingCommand(tx, { bookingId: booked.id }, commandContext(agent, randomUUID(), new Date(T0.getTime() - 48 * HOUR + MIN))),
    );
    const onTheDeadline = await bookingAt(t, free, new Date(T0.getTime() + MIN)); // reserve deadline T0+61m = now: not yet due
    const now = new Date(T0.getTime() + 61 * MIN);

    const reserveBefore = await metricValue('crm_booking_expiration_items_total', { phase: 'reserve' });
    const bookingBefore = await metricValue('crm_booking_expiration_items_total', { phase: 'booking' });
    const ctx = jobContext(t);
    const summary = (await createBookingExpirationJob({ now: () => now }).run(ctx)) as BookingExpirationSummary;

    expect(summary).toMatchObject({ ReserveExpiredCount: 2, BookingExpiredCount: 1, SkippedLockedCount: 0, FailedCount: 0, Batches: 1, Aborted: false });
    expect(summary.DurationMs).toBeGreaterThanOrEqual(0);
    expect(await bookingRow(t, reserved.id)).toMatchObject({ status: 'ReserveExpired', version: 2, closedAt: now });
    expect(await bookingRow(t, awaiting.id)).toMatchObject({ status: 'ReserveExpired', version: 3 });
    expect(await bookingRow(t, booked.id)).toMatchObject({ status: 'BookingExpired', version: 3 });
    // INV-BKG-3/5 boundary: at exactly the deadline the booking still holds
    expect(await bookingRow(t, onTheDeadline.id)).toMatchObject({ status: 'Reserved', version: 1 });

    for (const [b, phase, version, deadline] of [
      [reserved, 'Reserve', 2, reserved.reserveExpiresAt],
      [awaiting, 'Reserve', 3, awaiting.reserveExpiresAt],
      [booked, 'Booking', 3, new Date(T0.getTime() + MIN)],
    ] as const) {
      const rows = await outboxOf(t, b.id);
      const expired = rows.filter((r) => r.topic === TOPICS.bookingExpired);
      expect(expired).toHaveLength(1);
      const envelope = contracts[TOPICS.bookingExpired].parse(expired[0]!.payload);
      expect(envelope).toMatchObject({ aggregateType: 'Booking', aggregateId: b.id, correlationId: ctx.runId, causationId: null });
      expect(envelope.payload).toMatchObject({
        bookingId: b.id, dealId: b.dealId, propertyObjectId: b.propertyObjectId, tenantId: TENANT,
        phase, status: phase === 'Reserve' ? 'ReserveExpired' : 'BookingExpired', bookingVersion: version,
        deadline: deadline.toISOString(), expiredAt: now.toISOString(),
      });
      expect((await dealRow(t, b.dealId)).status).toBe('Application');
      expect((await timelineOf(t, b.id)).at(-1)).toMatchObject({
        action: 'expire', actorType: 'system', actorId: 'booking-expiration', correlationId: ctx.runId, bookingVersion: version,
        toStatus: phase === 'Reserve' ? 'ReserveExpired' : 'BookingExpired', messageIds: [envelope.messageId],
      });
    }
    expect((await dealRow(t, onTheDeadline.dealId)).status).toBe('Booking');

    expect(await metricValue('crm_booking_expiration_items_total', { phase: 'reserve' })).toBe(reserveBefore + 2);
    expect(await metricValue('crm_booking_expiration_items_total', { phase: 'booking' })).toBe(bookingBefore + 1);

    const lines = t.logLines();
    expect(lines.some((l) => l.msg === 'booking-expiration cycle started')).toBe(true);
    expect(lines.find((l) => l.msg === 'booking-expiration cycle completed')).toMatchObject({ ReserveExpiredCount: 2, BookingExpiredCount: 1 });
    const perBooking = lines.filter((l) => l.msg === 'booking expired');
    expect(perBooking.map((l) => [l.bookingId, l.phase]).sort()).toEqual(
      [[reserved.id, 'Reserve'], [awaiting.id, 'Reserve'], [booked.id, 'Booking']].sort(),
    );

    // idempotent by state: the next cycle finds nothing and writes nothing
    const outboxBefore = await t.database.sql`SELECT count(*)::int AS n FROM crm.outbox`;
    expect(await run(t, now)).toMatchObject({ ReserveExpiredCount: 0, BookingExpiredCount: 0, Batches: 1 });
    expect(await t.database.sql`SELECT count(*)::int AS n FROM crm.outbox`).toEqual(outboxBefore);

    // SLO: 1 ms past its deadline the booking is expired by the next cycle
    expect(await run(t, new Date(onTheDeadline.reserveExpiresAt.getTime() + 1))).toMatchObject({ ReserveExpiredCount: 1 });
  });

  it('a confirmed booking is not expired by its old reserve deadline (idempotent by state)', async () => {
    const b = await bookingAt(t, free, new Date(T0.getTime() + 2 * HOUR));
    await t.database.db.transaction((tx) =>
      confirmBookingCommand(tx, { bookingId: b.id }, commandContext(agent, randomUUID(), new Date(T0.getTime() + 2 * HOUR + MIN))),
    );
    await run(t, new Date(b.reserveExpiresAt.getTime() + MIN));
    expect((await bookingRow(t, b.id)).status).toBe('Booked');
  });

  it('works in batches of BOOKING_EXPIRATION_BATCH_SIZE until none is left', async () => {
    const createdAt = new Date(T0.getTime() + 10 * HOUR);
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await bookingAt(t, free, createdAt));
    const summary = await run(t, new Date(createdAt.getTime() + 61 * MIN), { BOOKING_EXPIRATION_BATCH_SIZE: 2 });
    expect(summary).toMatchObject({ ReserveExpiredCount: 5, Batches: 3, SkippedLockedCount: 0 });
    for (const b of created) expect((await bookingRow(t, b.id)).status).toBe('ReserveExpired');
  });

  it('keeps the deal in Booking while another booking of it is still active', async () => {
    const createdAt = new Date(T0.getTime() + 20 * HOUR);
    const first = await bookingAt(t, free, createdAt);
    await bookingAt(t, free, new Date(createdAt.getTime() + 30 * MIN), first.dealId);
    await run(t, new Date(createdAt.getTime() + 61 * MIN));
    expect((await bookingRow(t, first.id)).status).toBe('ReserveExpired');
    expect((await dealRow(t, first.dealId)).status).toBe('Booking');
  });

  it('FOR UPDATE SKIP LOCKED: a row locked by another transaction is skipped and counted, then expired by a later cycle', async () => {
    const createdAt = new Date(T0.getTime() + 30 * HOUR);
    const locked = await bookingAt(t, free, createdAt);
    const free1 = await bookingAt(t, free, createdAt);
    const now = new Date(createdAt.getTime() + 61 * MIN);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let lockedSignal!: () => void;
    const isLocked = new Promise<void>((r) => (lockedSignal = r));
    const holder = t.database.sql.begin(async (sql) => {
      await sql`SELECT id FROM crm.bookings WHERE id = ${locked.id} FOR UPDATE`;
      lockedSignal();
      await held;
    });
    await isLocked;
    try {
      const summary = await run(t, now);
      expect(summary).toMatchObject({ ReserveExpiredCount: 1, SkippedLockedCount: 1 });
      expect((await bookingRow(t, locked.id)).status).toBe('Reserved');
      expect((await bookingRow(t, free1.id)).status).toBe('ReserveExpired');
      // "stuck in Reserved": past its reserve deadline and still Reserved after the cycle
      expect(await metricValue('crm_bookings_stuck_in_reserved')).toBe(1);
    } finally {
      release();
      await holder;
    }
    expect(await run(t, now)).toMatchObject({ ReserveExpiredCount: 1, SkippedLockedCount: 0 });
    expect(await metricValue('crm_bookings_stuck_in_reserved')).toBe(0);
  });

  it('two worker instances at once expire each booking exactly once', async () => {
    const createdAt = new Date(T0.getTime() + 40 * HOUR);
    const created = [];
    for (let i = 0; i < 30; i++) created.push(await bookingAt(t, free, createdAt));
    const now = new Date(createdAt.getTime() + 61 * MIN);
    const [a, b] = await Promise.all([run(t, now, { BOOKING_EXPIRATION_BATCH_SIZE: 4 }), run(t, now, { BOOKING_EXPIRATION_BATCH_SIZE: 4 })]);
    expect(a.ReserveExpiredCount + b.ReserveExpiredCount).toBe(30);
    const [{ n }] = await t.database.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM crm.outbox WHERE topic = ${TOPICS.bookingExpired} AND aggregate_id IN ${t.database.sql(created.map((c) => c.id))}`;
    expect(n).toBe(30);
  });

  it('a booking whose expiry fails is logged and left for the next cycle; the rest of the batch commits', async () => {
    const createdAt = new Date(T0.getTime() + 50 * HOUR);
    const bad = await bookingAt(t, free, createdAt);
    const good = await bookingAt(t, free, createdAt);
    await t.database.sql.unsafe(`
      CREATE FUNCTION crm_test_fail_expiry() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'forced failure'; END $$;
      CREATE TRIGGER crm_test_fail_expiry BEFORE INSERT ON crm.outbox FOR EACH ROW
        WHEN (NEW.aggregate_id = '${bad.id}') EXECUTE FUNCTION crm_test_fail_expiry();`);
    try {
      const summary = await run(t, new Date(createdAt.getTime() + 61 * MIN));
      expect(summary).toMatchObject({ ReserveExpiredCount: 1, FailedCount: 1, SkippedLockedCount: 0 });
    } finally {
      await t.database.sql.unsafe(`DROP TRIGGER crm_test_fail_expiry ON crm.outbox; DROP FUNCTION crm_test_fail_expiry();`);
    }
    // neither the status change nor any row of the failed booking survived
    expect(await bookingRow(t, bad.id)).toMatchObject({ status: 'Reserved', version: 1 });
    expect((await timelineOf(t, bad.id)).map((r) => r.action)).toEqual(['create']);
    expect((await outboxOf(t, bad.id)).map((r) => r.topic)).toEqual([TOPICS.bookingCreated]);
    expect((await bookingRow(t, good.id)).status).toBe('ReserveExpired');
    expect(t.logLines().some((l) => l.msg === 'booking expiry failed' && l.bookingId === bad.id)).toBe(true);
    expect(await run(t, new Date(createdAt.getTime() + 61 * MIN))).toMatchObject({ ReserveExpiredCount: 1, FailedCount: 0 });
  });

  it('stops before the next batch when the worker is asked to stop', async () => {
    const createdAt = new Date(T0.getTime() + 60 * HOUR);
    const b = await bookingAt(t, free, createdAt);
    const controller = new AbortController();
    controller.abort();
    expect(await run(t, new Date(createdAt.getTime() + 61 * MIN), {}, controller.signal)).toMatchObject({ Batches: 0, ReserveExpiredCount: 0, Aborted: true });
    expect((await bookingRow(t, b.id)).status).toBe('Reserved');
    await run(t, new Date(createdAt.getTime() + 61 * MIN));
  });

  it('one cycle through the run log records its summary in ops.job_runs', async () => {
    const result = await runJobCycle(bookingExpirationJob, { database: t.database, env: t.env, logger: t.logger, signal: new AbortController().signal, kafka: jobContext(t).kafka }, 'manual');
    expect(result.status).toBe('succeeded');
    const [row] = await t.database.sql<{ status: string; summary: Record<string, unknown> }[]>`SELECT status, summary FROM ops.job_runs WHERE run_id = ${result.runId}`;
    expect(row!.status).toBe('succeeded');
    expect(Object.keys(row!.summary)).toEqual(expect.arrayContaining(['ReserveExpiredCount', 'BookingExpiredCount', 'SkippedLockedCount', 'DurationMs', 'Batches']));
  });
});

/**
 * A transaction that holds SHARE on crm.booking_timeline: every transition inserts a timeline row, so a
 * transaction that already took its booking's row lock waits inside it until the gate opens. That is how
 * the race tests put each winner first on purpose (besides the free races, whose winner is chance).
 */
async function timelineGate(t: TestContext) {
  const conn = await t.database.sql.reserve();
  await conn`BEGIN`;
  await conn`LOCK TABLE crm.booking_timeline IN SHARE MODE`;
  return {
    open: async () => {
      await conn`COMMIT`;
      conn.release();
    },
  };
}

/** sessions of this test's database waiting for a lock */
async function lockWaiters(t: TestContext): Promise<number> {
  const [row] = await t.database.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
  return row!.n;
}

async function waitForLockWaiters(t: TestContext, n: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await lockWaiters(t)) < n) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} lock waiters`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

type RaceMode = 'expiry-first' | 'command-first' | 'free';
/** run 0: the worker commits while the command waits for the row; run 1: the command holds the row, the worker skips it; then free races */
const modeOf = (i: number): RaceMode => (i === 0 ? 'expiry-first' : i === 1 ? 'command-first' : 'free');

/**
 * The command and the expiry cycle in flight together, ordered by `mode`. The command is sent as the
 * UI sends it: with the version the user saw (expectedVersion).
 */
async function race<T>(t: TestContext, mode: RaceMode, command: () => Promise<T>, job: () => Promise<BookingExpirationSummary>) {
  if (mode === 'free') return Promise.allSettled([command(), job()]);
  const gate = await timelineGate(t);
  try {
    if (mode === 'expiry-first') {
      const jobRun = job(); // locks the booking, then waits at the gate
      await waitForLockWaiters(t, 1);
      const commandRun = command(); // waits for the booking's row lock
      await waitForLockWaiters(t, 2);
      await gate.open();
      return Promise.allSettled([commandRun, jobRun]);
    }
    const commandRun = command(); // locks the booking, then waits at the gate
    await waitForLockWaiters(t, 1);
    const jobRun = await Promise.allSettled([job()]); // SKIP LOCKED: done without waiting
    expect(jobRun[0].status === 'fulfilled' && jobRun[0].value.SkippedLockedCount).toBe(1);
    await gate.open();
    return [(await Promise.allSettled([commandRun]))[0], jobRun[0]] as const;
  } finally {
    await gate.open().catch(() => {});
  }
}

describe('races with confirm and extend (100 runs each)', () => {
  let t: TestContext;
  let free: { id: string };
  beforeAll(async () => {
    t = await createTestContext();
    free = await insertProgram(t, TENANT, { reserveDurationMinutes: 60, bookingDurationHours: 48 });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function topicsOf(bookingId: string) {
    return (await outboxOf(t, bookingId)).map((r) => r.topic);
  }

  it('expiration vs confirm: one consistent state, exactly one event for the winning transition; the loser is told the reserve expired and when; both winners occur', async () => {
    const outcomes = { confirmed: 0, expired: 0 };
    for (let i = 0; i < 100; i++) {
      const deal = await insertDeal(t, TENANT);
      const booking = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, TENANT), programId: free.id });
      // the worker's clock is past the reserve deadline; the confirm's (real) clock is inside it: both are legal alone
      const jobNow = new Date(booking.reserveExpiresAt.getTime() + 1000);
      const mode = modeOf(i);
      const [confirm, job] = await race(
        t,
        mode,
        () => callerFor(t, agent).booking.confirm({ bookingId: booking.id, expectedVersion: booking.version }),
        () => run(t, jobNow),
      );
      expect(job.status).toBe('fulfilled');
      const row = await bookingRow(t, booking.id);
      const topics = await topicsOf(booking.id);
      const timeline = await timelineOf(t, booking.id);
      if (row.status === 'Booked') {
        outcomes.confirmed++;
        expect(mode).not.toBe('expiry-first');
        expect(confirm.status).toBe('fulfilled');
        expect(topics).toEqual([TOPICS.bookingCreated, TOPICS.bookingConfirmed]);
        expect((await dealRow(t, deal.id)).status).toBe('Booking');
      } else {
        outcomes.expired++;
        expect(mode).not.toBe('command-first');
        expect(row.status).toBe('ReserveExpired');
        expect(confirm.status).toBe('rejected');
        // not CRM_BOOKING_VERSION_CONFLICT: the domain reason, with the deadline that was missed
        const cause = (confirm as PromiseRejectedResult).reason.cause;
        expect(cause.code).toBe('CRM_BOOKING_RESERVE_EXPIRED');
        expect(cause.details.deadline).toBe(booking.reserveExpiresAt.toISOString());
        expect(topics).toEqual([TOPICS.bookingCreated, TOPICS.bookingExpired]);
        expect((await dealRow(t, deal.id)).status).toBe('Application');
      }
      expect(row.version).toBe(2);
      expect(timeline).toHaveLength(2);
    }
    expect(outcomes.confirmed + outcomes.expired).toBe(100);
    expect(outcomes.confirmed).toBeGreaterThan(0);
    expect(outcomes.expired).toBeGreaterThan(0);
    console.info('expiration vs confirm outcomes', outcomes);
  });

  it('expiration vs extend: one consistent state, exactly one event for the winning transition; the loser is told the booking expired and when; both winners occur', async () => {
    const outcomes = { extended: 0, expired: 0 };
    for (let i = 0; i < 100; i++) {
      const deal = await insertDeal(t, TENANT);
      const booking = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, TENANT), programId: free.id });
      const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
      const jobNow = new Date(confirmed.bookingExpiresAt!.getTime() + 1000);
      const mode = modeOf(i);
      const [extend, job] = await race(
        t,
        mode,
        () => callerFor(t, manager).booking.extend({ bookingId: booking.id, expectedVersion: confirmed.version }),
        () => run(t, jobNow),
      );
      expect(job.status).toBe('fulfilled');
      const row = await bookingRow(t, booking.id);
      const topics = await topicsOf(booking.id);
      if (row.status === 'Booked') {
        outcomes.extended++;
        expect(mode).not.toBe('expiry-first');
        expect(extend.status).toBe('fulfilled');
        expect(row.bookingExpiresAt!.getTime()).toBe(confirmed.bookingExpiresAt!.getTime() + 48 * HOUR);
        expect(topics).toEqual([TOPICS.bookingCreated, TOPICS.bookingConfirmed, TOPICS.bookingExtended]);
      } else {
        outcomes.expired++;
        expect(mode).not.toBe('command-first');
        expect(row.status).toBe('BookingExpired');
        expect(extend.status).toBe('rejected');
        const cause = (extend as PromiseRejectedResult).reason.cause;
        expect(cause.code).toBe('CRM_BOOKING_BOOKING_EXPIRED');
        expect(cause.details.deadline).toBe(confirmed.bookingExpiresAt!.toISOString());
        expect(topics).toEqual([TOPICS.bookingCreated, TOPICS.bookingConfirmed, TOPICS.bookingExpired]);
        expect((await dealRow(t, deal.id)).status).toBe('Application');
      }
      expect(row.version).toBe(3);
      expect(await timelineOf(t, booking.id)).toHaveLength(3);
    }
    expect(outcomes.extended + outcomes.expired).toBe(100);
    expect(outcomes.extended).toBeGreaterThan(0);
    expect(outcomes.expired).toBeGreaterThan(0);
    console.info('expiration vs extend outcomes', outcomes);
  });

  it('a stale confirm after the worker expired the booking answers RESERVE_EXPIRED with the deadline over HTTP (data.deadline), not VERSION_CONFLICT', async () => {
    const deal = await insertDeal(t, TENANT);
    const booking = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, TENANT), programId: free.id });
    await run(t, new Date(booking.reserveExpiresAt.getTime() + 1000));
    expect((await bookingRow(t, booking.id)).status).toBe('ReserveExpired');
    const res = await httpCall(t, agent, 'booking.confirm', { bookingId: booking.id, expectedVersion: 1 }, 'mutation');
    expect(res.status).toBe(412);
    expect(res.error).toMatchObject({ domainCode: 'CRM_BOOKING_RESERVE_EXPIRED', deadline: booking.reserveExpiresAt.toISOString() });
  });
});
