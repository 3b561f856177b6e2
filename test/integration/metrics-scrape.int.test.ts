import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, insertObjectCard, insertProjectCard } from '../fixtures/catalog.fixtures';
import { eventually, insertObjects, insertProject, TENANT } from '../fixtures/chessboard.fixtures';
import { actor, callerFor, insertDeal, insertProgram } from '../fixtures/crm.fixtures';
import { CONSUMER_GROUPS } from '../../server/contracts/consumer-groups';
import { createTestContext, routeHandlersOn, type TestContext } from '../harness/harness';
import { parseExposition, type Scrape } from '../harness/prometheus';
import { JOB_NAMES } from '../../server/main/jobs';
import { projectedObjectOf } from '../harness/crm-projection';

/**
 * The two scrape endpoints after every job and command ran: the web's /api/metrics (its route handler,
 * in this process, on a test database) and the worker's /metrics (server/main/worker.ts as a child process
 * with second-by-second schedules on its own test database and topic prefix). Every metric name is
 * served, and the values are the ones the seeded data must produce.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The metric names the specs (and the issue: outbox lag, consumer lag, job liveness) require. */
const SPEC_NAMES = [
  'crm_booking_expiration_items_total', 'crm_booking_cancel_total', 'crm_bookings_created_total', 'crm_booking_confirm_total',
  'crm_bookings_stuck_in_reserved', 'crm_booking_saga_phase_duration_seconds',
  'chessboard_property_object_hold_expiration_run_total', 'chessboard_property_object_hold_expiration_cycle_duration_seconds',
  'chessboard_property_object_hold_expiration_items_total', 'chessboard_property_object_hold_expiration_backlog',
  'chessboard_property_object_hold_expiration_skip_locked_total', 'chessboard_property_object_hold_expiration_errors_total',
  'chessboard_crm_hold_mismatch_total',
  'catalog_delisted_retention_run_duration_seconds', 'catalog_delisted_deleted_property_object_cards_total',
  'catalog_delisted_deleted_project_cards_total', 'catalog_delisted_deleted_overrides_total', 'catalog_delisted_retention_batches_processed',
  'catalog_delisted_backlog', 'catalog_delisted_retention_lock_contention_total',
  'pin_outbox_backlog', 'pin_outbox_oldest_pending_age_seconds', 'pin_consumer_lag_messages', 'pin_consumer_processing_delay_seconds',
  'pin_job_runs_total', 'pin_job_last_success_timestamp_seconds',
];
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

async function insertOverrides(t: TestContext, objectCardIds: string[], projectCardId: string) {
  for (const id of objectCardIds) {
    await t.database.sql`INSERT INTO catalog.property_object_display_overrides (id, property_object_id, title, deleted_at) VALUES
      (${randomUUID()}, ${id}, 'live', NULL), (${randomUUID()}, ${id}, 'removed earlier', now())`;
  }
  await t.database.sql`INSERT INTO catalog.building_display_overrides (id, project_id, building_id, display_name, deleted_at) VALUES
    (${randomUUID()}, ${projectCardId}, ${randomUUID()}, 'live', NULL)`;
}

// ---------------------------------------------------------------------------------------------- web

describe('web /api/metrics (route handler)', () => {
  let t: TestContext;
  let restore: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    t = await createTestContext();
    restore = routeHandlersOn(t);
  });
  afterAll(async () => {
    await restore?.();
    await t?.close();
  });

  async function scrapeWeb(): Promise<Scrape> {
    const { webMetricsResponse } = await import('@/server/main/web-services');
    const res = await webMetricsResponse();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return parseExposition(await res.text());
  }

  it('serves every metric, the database gauges of its database, and the commands and requests it handled', async () => {
    // database state the gauges read at scrape time
    const place = await insertProject(t.database, TENANT);
    await insertObjects(t.database, place, [{ status: 'Reserved', timer: minutesAgo(20) }, { status: 'Booked', timer: minutesAgo(11) }, { status: 'Reserved', timer: minutesAgo(5) }]);
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 40 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 31 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 1 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Published' });
    await insertProjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 40 * DAY_MS) });

    const before = await scrapeWeb();
    const delta = (s: Scrape, name: string, labels?: Record<string, string>) => (s.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);

    // commands (in this process, as the web runs them)
    const tenant = randomUUID();
    const program = await insertProgram(t, tenant);
    const agent = actor('agent', tenant);
    const manager = actor('developer_manager', tenant);
    const created = [];
    for (let i = 0; i < 3; i++) {
      const deal = await insertDeal(t, tenant);
      created.push(await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, tenant), programId: program.id }));
    }
    await callerFor(t, manager).booking.confirm({ bookingId: created[0]!.id });
    await callerFor(t, agent).booking.cancel({ bookingId: created[1]!.id, reason: 'changed plans' });
    await expect(callerFor(t, manager).booking.confirm({ bookingId: created[1]!.id })).rejects.toThrow();
    // one tRPC request through the HTTP route (unauthenticated → 401)
    const { GET: trpcGet } = await import('@/app/api/trpc/[trpc]/route');
    const url = new URL('http://localhost/api/trpc/booking.list');
    url.searchParams.set('input', JSON.stringify(superjson.serialize({})));
    expect((await trpcGet(new Request(url))).status).toBe(401);

    const s = await scrapeWeb();
    for (const n of [...SPEC_NAMES, 'pin_http_request_duration_seconds', 'auth_sign_in_total', 'pin_reconciliation_mismatches']) expect(s.names.has(n), n).toBe(true);

    expect(delta(s, 'crm_bookings_created_total', { initiated_by: 'agent' })).toBe(3);
    expect(delta(s, 'crm_booking_confirm_total', { result: 'success' })).toBe(1);
    expect(delta(s, 'crm_booking_cancel_total', { result: 'success' })).toBe(1);
    const confirmFailures = s.samples.filter((x) => x.name === 'crm_booking_confirm_total' && x.labels.result !== 'success');
    expect(confirmFailures.reduce((a, x) => a + x.value, 0) - before.samples.filter((x) => x.name === 'crm_booking_confirm_total' && x.labels.result !== 'success').reduce((a, x) => a + x.value, 0)).toBe(1);
    expect(confirmFailures.map((x) => x.labels.result).join()).toMatch(/CRM_/);
    expect(delta(s, 'crm_booking_saga_phase_duration_seconds_count', { phase: 'reserve' })).toBe(1);
    expect(delta(s, 'pin_http_request_duration_seconds_count', { procedure: 'booking.list', status: '401' })).toBe(1);

    // gauges computed from the web's database at scrape time
    expect(s.value('chessboard_property_object_hold_expiration_backlog')).toBe(2); // 20 and 11 min overdue > 10 min grace
    expect(s.value('catalog_delisted_backlog', { kind: 'property_object', scope: 'all' })).toBe(3);
    expect(s.value('catalog_delisted_backlog', { kind: 'property_object', scope: 'past_cutoff' })).toBe(2);
    expect(s.value('catalog_delisted_backlog', { kind: 'project', scope: 'all' })).toBe(1);
    expect(s.value('catalog_delisted_backlog', { kind: 'project', scope: 'past_cutoff' })).toBe(1);
    const [{ n: crmPending }] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.outbox WHERE published_at IS NULL`;
    expect(crmPending).toBe(3 + 1 + 1); // created ×3, confirmed, cancelled
    expect(s.value('pin_outbox_backlog', { outbox: 'crm' })).toBe(crmPending);
    expect(s.value('pin_outbox_backlog', { outbox: 'chessboard' })).toBe(0);
    expect(s.value('pin_outbox_oldest_pending_age_seconds', { outbox: 'crm' })).toBeGreaterThan(0);
  }, 60_000);
});

// ------------------------------------------------------------------------------------------- worker

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

describe('worker /metrics (server/main/worker.ts as a child process)', () => {
  let t: TestContext;
  let worker: ChildProcess | undefined;
  let output = '';
  let port: number;
  const startedAt = Date.now() / 1000;
  const seeded = { reservedStuck: 3, bookedStuck: 2, reserveExpired: 2, bookingExpired: 1 };

  beforeAll(async () => {
    t = await createTestContext({ kafka: true });

    // chessboard: holds past grace whose CRM release was lost (the safety net releases them)
    const place = await insertProject(t.database, TENANT);
    await insertObjects(t.database, place, [
      ...Array.from({ length: seeded.reservedStuck }, () => ({ status: 'Reserved' as const, timer: minutesAgo(20) })),
      ...Array.from({ length: seeded.bookedStuck }, () => ({ status: 'Booked' as const, timer: minutesAgo(30) })),
    ]);
    // crm: bookings past their deadlines (booking-expiration), on chessboard objects the consumer holds and releases
    const program = await insertProgram(t, TENANT);
    const agent = actor('agent', TENANT);
    const freeObjects = await insertObjects(t.database, place, [{ status: 'Free' }, { status: 'Free' }, { status: 'Free' }]);
    const bookingIds: string[] = [];
    for (const propertyObjectId of freeObjects) {
      const deal = await insertDeal(t, TENANT);
      bookingIds.push((await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId, programId: program.id })).id);
    }
    await callerFor(t, actor('developer_manager', TENANT)).booking.confirm({ bookingId: bookingIds[2]! });
    await t.database.sql`UPDATE crm.bookings SET reserve_expires_at = now() - interval '1 minute' WHERE id IN ${t.database.sql(bookingIds.slice(0, 2))}`;
    await t.database.sql`UPDATE crm.bookings SET booking_expires_at = now() - interval '1 minute' WHERE id = ${bookingIds[2]!}`;
    // a booking of a day that has ended gives reports-daily-rollup a day to roll up (an idle cycle records no run)
    await t.database.sql`UPDATE crm.bookings SET created_at = created_at - interval '2 days' WHERE id = ${bookingIds[0]!}`;
    // an object held by another deal: the CRM event for it is refused (INV-CHS-003 → DLQ)
    const [held] = await insertObjects(t.database, place, [{ status: 'Reserved', timer: new Date(Date.now() + 3600_000) }]);
    // … whose hold is newer than the intruder's create (DESIGN decision 7 moves only an OLDER hold)
    await t.database.sql`UPDATE chessboard.property_objects SET status_changed_at = now() + interval '1 hour' WHERE id = ${held!}`;
    const intruder = await insertDeal(t, TENANT);
    await callerFor(t, agent).booking.create({ dealId: intruder.id, propertyObjectId: held!, programId: program.id });
    // catalog: Delisted cards past the retention period (with overrides), and one that is too young
    const oldCards = [
      await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 40 * DAY_MS) }),
      await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 35 * DAY_MS) }),
    ];
    const oldProject = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 40 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 2 * DAY_MS) });
    await insertOverrides(t, oldCards, oldProject);

    port = await freePort();
    const every = '* * * * * *';
    worker = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['server/main/worker.ts'], {
      cwd: ROOT,
      env: {
        ...process.env, NODE_ENV: 'test', DATABASE_URL: t.url, KAFKA_BROKERS: t.env.KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: t.prefix,
        WORKER_METRICS_PORT: String(port), LOG_LEVEL: 'info', OTEL_TRACES_EXPORTER: 'none',
        BOOKING_EXPIRATION_SCHEDULE: every, HOLD_EXPIRATION_SCHEDULE: every, AGGREGATES_RECALC_SCHEDULE: every,
        DELISTED_RETENTION_SCHEDULE: every, OUTBOX_RELAY_SCHEDULE: every,
        NOTIFICATIONS_DEADLINE_SOON_SCHEDULE: every, NOTIFICATIONS_RETENTION_SCHEDULE: every, REPORTS_DAILY_ROLLUP_SCHEDULE: every,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-20_000); };
    worker.stdout!.on('data', keep);
    worker.stderr!.on('data', keep);
    await eventually(async () => {
      if (worker!.exitCode !== null) throw new Error(`worker exited ${worker!.exitCode}:\n${output}`);
      return fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
    }, 60_000, 'worker /health');
  }, 180_000);

  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((r) => worker!.once('exit', r));
      worker.kill('SIGTERM');
      const timer = setTimeout(() => worker!.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await t?.close();
  }, 30_000);

  const scrapeWorker = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    return parseExposition(await res.text());
  };
  const count = async (q: string) => (await t.database.sql.unsafe<{ n: number }[]>(q))[0]!.n;

  it('serves every spec metric with the values the jobs, the relay and the consumers produced', async () => {
    const crmStatus = CONSUMER_GROUPS.crmPropertyObjectStatus;
    const cards = CONSUMER_GROUPS.catalogCardProjection;
    const scheduled = JOB_NAMES.filter((j) => j !== 'reconciliation');
    // 1. Every seeded piece of work done, read from the database only (a counter is incremented after its
    //    commit, so no counter takes part in this wait). Once this holds, nothing is left that could write
    //    an outbox row: every event is published and consumed, no recalc is due, no hold or booking is past
    //    its deadline, no Delisted card past the cutoff.
    const workDone = async () => {
      const [r] = await t.database.sql<{ [k: string]: number }[]>`SELECT
        (SELECT count(*)::int FROM chessboard.property_objects WHERE (status = 'Reserved' AND reserved_until < now() - interval '10 minutes')
           OR (status = 'Booked' AND booked_until < now() - interval '10 minutes')) AS stuck_holds,
        (SELECT count(*)::int FROM crm.bookings WHERE (status = 'Reserved' AND reserve_expires_at < now())
           OR (status = 'Booked' AND booking_expires_at < now())) AS overdue_bookings,
        (SELECT count(*)::int FROM catalog.project_cards WHERE status = 'Delisted' AND updated_at < now() - interval '30 days')
          + (SELECT count(*)::int FROM catalog.property_object_cards WHERE status = 'Delisted' AND updated_at < now() - interval '30 days') AS old_delisted,
        (SELECT count(*)::int FROM crm.outbox WHERE published_at IS NULL) + (SELECT count(*)::int FROM chessboard.outbox WHERE published_at IS NULL) AS unpublished,
        (SELECT count(*)::int FROM crm.outbox) - (SELECT count(*)::int FROM chessboard.inbox WHERE consumer = ${crmStatus}) AS crm_unconsumed,
        (SELECT count(*)::int FROM chessboard.outbox) - (SELECT count(*)::int FROM catalog.inbox WHERE consumer = ${cards}) AS chessboard_unconsumed,
        (SELECT count(*)::int FROM chessboard.projects WHERE aggregates_recalc_requested_at IS NOT NULL) AS recalcs_due,
        (SELECT count(DISTINCT job)::int FROM ops.job_runs WHERE status = 'succeeded' AND job IN ${t.database.sql(scheduled)}) AS jobs_succeeded`;
      lastWork = r;
      return Object.entries(r!).every(([k, v]) => v === (k === 'jobs_succeeded' ? scheduled.length : 0)) ? r : undefined;
    };
    let lastWork: unknown;
    await eventually(workDone, 120_000, 'the seeded work done').catch(async (e: Error) => {
      const succeeded = await t.database.sql`SELECT DISTINCT job FROM ops.job_runs WHERE status = 'succeeded'`;
      throw new Error(`${e.message}: ${JSON.stringify(lastWork)}; jobs succeeded: ${succeeded.map((x) => x.job).join(', ')}; worker output:\n${output.slice(-3000)}`);
    });

    // 2. Bring the worker to a state where nothing can run: every job paused through its own control
    //    (ops.job_controls; the relay's NOTIFY wake-ups obey it too), then wait until the worker reports no
    //    tick between its pause check and its cycle's end, no cycle and no consumer batch in flight. No
    //    message is left to fetch (step 1), so from here on no counter and no row changes: the scrape and
    //    the counts below are one consistent snapshot, whatever the machine's load.
    for (const job of JOB_NAMES) {
      await t.database.sql`INSERT INTO ops.job_controls (job, paused, changed_by, changed_at, reason)
        VALUES (${job}, true, 'metrics-scrape test', now(), 'quiesce before the scrape') ON CONFLICT (job) DO UPDATE SET paused = true`;
    }
    const activity = await eventually(async () => {
      const health = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json() as Promise<{ activity: { ticksInProgress: number; running: string[]; consumerBatchesInFlight: number } }>);
      const a = health.activity;
      return a.ticksInProgress === 0 && a.running.length === 0 && a.consumerBatchesInFlight === 0 ? a : undefined;
    }, 30_000, 'the paused worker idle');
    expect(activity).toEqual({ ticksInProgress: 0, running: [], consumerBatchesInFlight: 0 });
    expect(await workDone(), 'nothing ran between the work and the pause that left work behind').toBeTruthy();
    const s = await scrapeWorker();
    // the counters of the work stand still (a paused job still counts its skipped ticks, so those are left out)
    const workCounters = (x: Scrape) => x.samples.filter((m) => /^(pin_consumer_messages|pin_outbox_published|pin_job_runs|crm_booking_expiration_items|chessboard_property_object_hold_expiration_items|catalog_delisted_deleted_.*)_total$/.test(m.name));
    expect(workCounters(await scrapeWorker())).toEqual(workCounters(s));

    for (const n of SPEC_NAMES) expect(s.names.has(n), n).toBe(true);

    // property-object-hold-expiration: each release = a lost CRM release
    expect(s.value('chessboard_property_object_hold_expiration_items_total', { phase: 'reserved' })).toBe(seeded.reservedStuck);
    expect(s.value('chessboard_property_object_hold_expiration_items_total', { phase: 'booked' })).toBe(seeded.bookedStuck);
    const runs = s.value('chessboard_property_object_hold_expiration_run_total')!;
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(s.value('chessboard_property_object_hold_expiration_cycle_duration_seconds_count')).toBe(runs);
    expect(s.value('chessboard_property_object_hold_expiration_backlog')).toBe(0);
    expect(s.value('chessboard_property_object_hold_expiration_skip_locked_total')).toBe(0);
    expect(s.value('chessboard_property_object_hold_expiration_errors_total')).toBe(0);

    // booking-expiration
    expect(s.value('crm_booking_expiration_items_total', { phase: 'reserve' })).toBe(seeded.reserveExpired);
    expect(s.value('crm_booking_expiration_items_total', { phase: 'booking' })).toBe(seeded.bookingExpired);
    expect(s.value('crm_bookings_stuck_in_reserved')).toBe(0);

    // delisted-retention: phase A (2 cards, 2+2 overrides) and phase B (1 project, 1 override), one batch each
    expect(s.value('catalog_delisted_deleted_property_object_cards_total')).toBe(2);
    expect(s.value('catalog_delisted_deleted_project_cards_total')).toBe(1);
    expect(s.value('catalog_delisted_deleted_overrides_total')).toBe(5);
    expect(s.value('catalog_delisted_retention_batches_processed')).toBe(2);
    expect(s.value('catalog_delisted_retention_lock_contention_total')).toBe(0);
    expect(s.value('catalog_delisted_retention_run_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(s.value('catalog_delisted_backlog', { kind: 'property_object', scope: 'all' })).toBe(1);
    expect(s.value('catalog_delisted_backlog', { kind: 'property_object', scope: 'past_cutoff' })).toBe(0);
    expect(s.value('catalog_delisted_backlog', { kind: 'project', scope: 'all' })).toBe(0);

    // outbox lag and relay throughput: everything written was published by this worker
    for (const outbox of ['crm', 'chessboard'] as const) {
      expect(s.value('pin_outbox_oldest_pending_age_seconds', { outbox })).toBe(0);
      expect(s.value('pin_outbox_published_total', { outbox })).toBe(await count(`SELECT count(*)::int AS n FROM ${outbox}.outbox`));
    }
    expect(await count('SELECT count(*)::int AS n FROM crm.outbox')).toBe(4 + 1 + 3); // created ×4, confirmed, expired ×3

    // consumers: one outcome per message (duplicates aside), the refused one counted as a hold mismatch
    const consumed = (consumer: string) => s.samples
      .filter((x) => x.name === 'pin_consumer_messages_total' && x.labels.consumer === consumer && x.labels.result !== 'duplicate')
      .reduce((a, x) => a + x.value, 0);
    expect(consumed(crmStatus)).toBe(await count('SELECT count(*)::int AS n FROM crm.outbox'));
    expect(consumed(cards)).toBe(await count('SELECT count(*)::int AS n FROM chessboard.outbox'));
    expect(s.value('pin_consumer_messages_total', { consumer: crmStatus, result: 'rejected' })).toBe(1);
    expect(s.value('chessboard_crm_hold_mismatch_total', { topic: 'pin.crm.booking-created.v1' })).toBe(1);
    for (const consumer of [crmStatus, cards]) {
      expect(s.value('pin_consumer_lag_messages', { consumer })).toBe(0);
      expect(s.value('pin_consumer_processing_delay_seconds', { consumer })).toBeGreaterThanOrEqual(0);
    }

    // job liveness
    const now = Date.now() / 1000;
    for (const job of JOB_NAMES.filter((j) => j !== 'reconciliation')) {
      expect(s.value('pin_job_runs_total', { job, status: 'succeeded' }), job).toBeGreaterThanOrEqual(1);
      expect(s.value('pin_job_runs_total', { job, status: 'failed' }) ?? 0, job).toBe(0);
      const last = s.value('pin_job_last_success_timestamp_seconds', { job })!;
      expect(last, job).toBeGreaterThanOrEqual(startedAt);
      expect(last, job).toBeLessThanOrEqual(now + 1);
    }
  }, 150_000);
});
