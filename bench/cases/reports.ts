import path from 'node:path';
import type postgres from 'postgres';
import { createSession, SESSION_COOKIE } from '../../server/auth/session';
import { createCaller } from '../../server/main/app-router';
import { createDatabase } from '../../server/platform/db';
import { parseEnv } from '../../server/main/env';
import { createLogger } from '../../server/platform/logger';
import { bookingsCsvResponse } from '../../server/reports/bookings-csv-http';
import { createContextFor } from '../../server/trpc/context';
import { Agent } from '../lib/agent-client';
import type { BenchCase } from '../lib/context';
import { rawClient, settle } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { median, percentile } from '../lib/stats';

/**
 * reports.funnel (docs/decisions/0024) at the target load: a year of history — 200,000 bookings created
 * over the 365 days before the run in 4 tenants of equal size, the newest 10,000 still active (the last
 * ~18 days) — with the deals, agents, crm's object projection and the timeline rows the report reads.
 * Written with set-based SQL (INSERT … SELECT over generate_series), fates, programs and step times
 * drawn from hashes of the booking's number: the same world on every run.
 *
 * Then the job reports-daily-rollup runs through the worker's job runner (the bench agent) until it has
 * nothing more to do, as the hourly schedule would have left it, and one more cycle is timed (the steady
 * cycle: the days whose bookings are still under way). Measured: `reports.funnel` through the real tRPC
 * procedure (createCaller: role check, zod input and output) as a developer manager of one tenant, for
 * the last whole month, quarter and year (UTC days, ending at the last midnight), and the CSV route of
 * the month (session cookie → whole body read), each after one warm-up. Budget: the 200 ms read budget.
 */

const BOOKINGS = 200_000;
const ACTIVE = 10_000;
const TENANTS = 4;
const AGENTS_PER_TENANT = 30;
const PROJECTS_PER_TENANT = 12;
const READ_BUDGET_MS = 200;
/**
 * reports.funnel calls per period. The target is a p95, and a nearest-rank p95 of fewer than 20 samples
 * is their maximum: 40 calls make it the 38th, so one stall of a shared machine does not decide it alone.
 */
const FUNNEL_RUNS = 40;
/** CSV downloads of the month (informational: a download, not a screen) */
const CSV_RUNS = 12;
const DAY_MS = 86_400_000;

const REASONS = [
  'Клиент передумал', 'Нашёл другой объект', 'Не одобрили ипотеку', 'Дорого', 'Перенёс покупку', 'Не устроила планировка',
  'Ошибка агента', 'Дубль брони', 'Клиент не выходит на связь', 'Выбрал другой этаж', 'Семейные обстоятельства', 'Продал свою квартиру позже',
];

/**
 * The bookings and all they hang on. Booking j (0 = oldest) of tenant j % 4; the newest ACTIVE are
 * Reserved / AwaitingPayment / Booked, the rest ended: free programs (70 %) cancelled, expired in
 * either phase or sold; paid programs (30 %) expired or cancelled after the contract, expired waiting
 * for it, or paid and then sold or expired. Step times are spread over minutes to days, at the
 * millisecond precision of the columns, so the medians are over distinct values.
 */
async function createDataset(sql: postgres.Sql, n: number, active: number): Promise<void> {
  const reasons = `ARRAY[${REASONS.map((r) => `'${r}'`).join(', ')}]`;
  await sql.unsafe(`INSERT INTO auth.tenants (id, name) SELECT bench.uuid('bench:tenant:' || t), 'Девелопер ' || t FROM generate_series(0, ${TENANTS - 1}) t`);
  await sql.unsafe(`INSERT INTO auth.users (id, email, display_name, password_hash, role, tenant_id)
    SELECT bench.uuid('bench:manager:' || t), 'manager-' || t || '@bench.local', 'Менеджер ' || t, 'x', 'developer_manager', bench.uuid('bench:tenant:' || t)
      FROM generate_series(0, ${TENANTS - 1}) t
    UNION ALL
    SELECT bench.uuid('bench:agent:' || t || ':' || a), 'agent-' || t || '-' || a || '@bench.local', 'Агент ' || t || '-' || a, 'x', 'agent', bench.uuid('bench:tenant:' || t)
      FROM generate_series(0, ${TENANTS - 1}) t, generate_series(0, ${AGENTS_PER_TENANT - 1}) a`);
  await sql.unsafe(`INSERT INTO crm.booking_programs (id, tenant_id, name, is_paid, reserve_duration_minutes, booking_duration_hours)
    SELECT bench.uuid('bench:program:' || t || ':' || p), bench.uuid('bench:tenant:' || t), CASE WHEN p THEN 'Платная' ELSE 'Бесплатная' END, p, 4320, 720
      FROM generate_series(0, ${TENANTS - 1}) t, unnest(ARRAY[false, true]) p`);
  // the plan: one row per booking with its fate and step times (ms after creation)
  await sql.unsafe(`CREATE TABLE bench.plan AS
    SELECT j, t, k.fate, k.paid_program, created_at,
           created_at + c.confirm_ms * interval '1 millisecond' AS confirmed_at,
           created_at + (c.confirm_ms + c.pay_ms) * interval '1 millisecond' AS paid_at,
           created_at + (c.confirm_ms + c.pay_ms + c.sell_ms) * interval '1 millisecond' AS sold_at,
           created_at + c.end_ms * interval '1 millisecond' AS ended_at,
           h
      FROM (SELECT j, j % ${TENANTS} AS t, (hashtext('bench:booking:' || j) & 2147483647) AS h,
                   date_trunc('milliseconds', now() - interval '365 days' + (j + 0.5) * (interval '365 days' - interval '10 minutes') / ${n}) AS created_at
              FROM generate_series(0, ${n - 1}) j) b
      CROSS JOIN LATERAL (SELECT
             1 + (hashtext('c' || j) & 2147483647) % (180 * 60000) AS confirm_ms,
             60000 + (hashtext('p' || j) & 2147483647) % (2 * 86400000) AS pay_ms,
             3600000 + (hashtext('s' || j) & 2147483647) % (20 * 86400000) AS sell_ms,
             60000 + (hashtext('e' || j) & 2147483647) % (60 * 60000) AS end_ms) c
      CROSS JOIN LATERAL (SELECT f AS fate, f IN ('contract', 'receipt', 'pendingR', 'paidBooked', 'expireC', 'cancelC', 'expireP', 'paidExpireB', 'paidSold') AS paid_program
        FROM (SELECT CASE
             WHEN j >= ${n - active} THEN (ARRAY['reserved', 'pendingR', 'contract', 'receipt', 'booked', 'paidBooked'])[1 + h % 6]
             WHEN h % 100 < 10 THEN 'cancelR' WHEN h % 100 < 25 THEN 'expireR' WHEN h % 100 < 33 THEN 'cancelB'
             WHEN h % 100 < 43 THEN 'expireB' WHEN h % 100 < 70 THEN 'sold'
             WHEN h % 100 < 75 THEN 'expireC' WHEN h % 100 < 79 THEN 'cancelC' WHEN h % 100 < 84 THEN 'expireP'
             WHEN h % 100 < 89 THEN 'paidExpireB' ELSE 'paidSold' END AS f) x) k`);
  await sql.unsafe(`ALTER TABLE bench.plan ADD PRIMARY KEY (j)`);
  await sql.unsafe(`INSERT INTO crm.property_objects (id, tenant_id, project_id, status, source_version, source_changed_at, updated_at, floor, rooms, price)
    SELECT bench.uuid('bench:object:' || j), bench.uuid('bench:tenant:' || t), bench.uuid('bench:project:' || t || ':' || (h / 7) % ${PROJECTS_PER_TENANT}),
           CASE WHEN fate IN ('sold', 'paidSold') THEN 'Sold' WHEN fate IN ('booked', 'paidBooked') THEN 'Booked'
                WHEN fate IN ('reserved', 'pendingR', 'contract', 'receipt') THEN 'Reserved' ELSE 'Free' END,
           2, created_at, created_at,
           CASE WHEN (h / 11) % 15 = 0 THEN NULL ELSE 1 + (h / 13) % 25 END,
           CASE WHEN (h / 17) % 15 = 0 THEN NULL ELSE (h / 19) % 6 END,
           5000000 + (h % 1000) * 10000
      FROM bench.plan`);
  await sql.unsafe(`INSERT INTO crm.deals (id, tenant_id, title, agent_id, status, created_at, updated_at)
    SELECT bench.uuid('bench:deal:' || j), bench.uuid('bench:tenant:' || t), 'Сделка №' || (100000 + j),
           CASE WHEN (h / 23) % 6 = 0 THEN NULL ELSE bench.uuid('bench:agent:' || t || ':' || (h / 29) % ${AGENTS_PER_TENANT}) END,
           CASE WHEN fate IN ('sold', 'paidSold') THEN 'Sale' WHEN fate IN ('reserved', 'pendingR', 'contract', 'receipt', 'booked', 'paidBooked') THEN 'Booking' ELSE 'Application' END,
           created_at - interval '1 day', created_at
      FROM bench.plan`);
  // booked_at: the free program's confirm, the paid program's payment; closed_at: the sale, the cancel or the expiry
  await sql.unsafe(`INSERT INTO crm.bookings (id, tenant_id, deal_id, property_object_id, program_id, status, reserve_expires_at, booking_expires_at,
      booked_at, payment_status, contract_document, receipt_document, closed_reason, closed_at, version, created_at, updated_at)
    SELECT bench.uuid('bench:booking:' || j), bench.uuid('bench:tenant:' || t), bench.uuid('bench:deal:' || j), bench.uuid('bench:object:' || j),
           bench.uuid('bench:program:' || t || ':' || paid_program), s.status,
           created_at + interval '3 days', CASE WHEN s.booked_at IS NOT NULL THEN s.booked_at + interval '30 days' END,
           s.booked_at, s.payment_status,
           CASE WHEN s.payment_status IN ('ContractUploaded', 'ReceiptUploaded', 'Paid') THEN 'contract-' || j || '.pdf' END,
           CASE WHEN s.payment_status IN ('ReceiptUploaded', 'Paid') THEN 'receipt-' || j || '.pdf' END,
           CASE s.status WHEN 'Cancelled' THEN (${reasons})[1 + (h / 31) % ${REASONS.length}]
                         WHEN 'ReserveExpired' THEN 'reserve-expired' WHEN 'BookingExpired' THEN 'booking-expired' END,
           s.closed_at, 3, created_at, coalesce(s.closed_at, s.booked_at, created_at)
      FROM bench.plan
      CROSS JOIN LATERAL (SELECT
           CASE WHEN fate IN ('reserved', 'pendingR') THEN 'Reserved' WHEN fate IN ('contract', 'receipt') THEN 'AwaitingPayment'
                WHEN fate IN ('booked', 'paidBooked') THEN 'Booked' WHEN fate IN ('sold', 'paidSold') THEN 'Completed'
                WHEN fate IN ('cancelR', 'cancelB', 'cancelC') THEN 'Cancelled' WHEN fate IN ('expireB', 'paidExpireB') THEN 'BookingExpired'
                ELSE 'ReserveExpired' END AS status,
           CASE WHEN NOT paid_program THEN 'NotRequired' WHEN fate IN ('pendingR', 'expireP') THEN 'Pending'
                WHEN fate IN ('contract', 'expireC', 'cancelC') THEN 'ContractUploaded' WHEN fate = 'receipt' THEN 'ReceiptUploaded' ELSE 'Paid' END AS payment_status,
           CASE WHEN fate IN ('booked', 'cancelB', 'expireB', 'sold') THEN confirmed_at
                WHEN fate IN ('paidBooked', 'paidExpireB', 'paidSold') THEN paid_at END AS booked_at,
           CASE WHEN fate IN ('sold', 'paidSold') THEN least(sold_at, now() - interval '1 minute')
                WHEN fate IN ('cancelR', 'expireR', 'expireP') THEN ended_at
                WHEN fate IN ('cancelB', 'expireB') THEN confirmed_at + (ended_at - created_at)
                WHEN fate IN ('cancelC', 'expireC') THEN confirmed_at + (ended_at - created_at)
                WHEN fate = 'paidExpireB' THEN paid_at + (ended_at - created_at) END AS closed_at) s`);
  // what the report reads of the timeline is a paid booking's contract upload; the other rows are there as crm writes them
  await sql.unsafe(`INSERT INTO crm.booking_timeline (booking_id, tenant_id, at, actor_type, actor_id, action, from_status, to_status, booking_version)
    SELECT b.id, b.tenant_id, b.created_at, 'user', 'bench', 'create', NULL, 'Reserved', 1 FROM crm.bookings b
    UNION ALL
    SELECT bench.uuid('bench:booking:' || j), bench.uuid('bench:tenant:' || t), confirmed_at, 'user', 'bench', 'uploadContract', 'Reserved', 'AwaitingPayment', 2
      FROM bench.plan WHERE paid_program AND fate NOT IN ('pendingR', 'expireP')
    UNION ALL
    SELECT b.id, b.tenant_id, b.closed_at, 'system', 'bench', 'close', NULL, b.status, 3 FROM crm.bookings b WHERE b.closed_at IS NOT NULL`);
  await settle(sql, ['crm.bookings', 'crm.deals', 'crm.property_objects', 'crm.booking_timeline', 'crm.booking_programs', 'auth.users', 'auth.tenants']);
}

const lastMidnight = () => new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);

export const reportsCase: BenchCase = {
  name: 'reports',
  title: 'reports.funnel over a year of history (200,000 bookings, 10,000 active)',
  async run(ctx) {
    const c = 'reports';
    const n = ctx.scale(BOOKINGS);
    const active = ctx.scale(ACTIVE);
    const runs = ctx.quick ? 10 : Math.max(ctx.runs, FUNNEL_RUNS);
    const url = await ctx.databases.create('reports');
    const sql = rawClient(url);
    const env = parseEnv({ ...process.env, ...ctx.workerEnv(url, '') });
    const logger = createLogger('web', { level: 'warn' });
    const database = createDatabase(url, { max: 5, applicationName: 'pin-bench-reports' });
    try {
      ctx.log(`reports: generating ${n.toLocaleString('en-US')} bookings over a year in ${TENANTS} tenants (${active.toLocaleString('en-US')} active)`);
      let t0 = performance.now();
      await createDataset(sql, n, active);
      ctx.log(`reports: dataset ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

      // the rollup as the hourly schedule leaves it: cycles until nothing is left, then one steady cycle
      const agent = await Agent.start('reports', ctx.workerEnv(url, ''), path.join(ctx.logDir, 'agent-reports.log'));
      const cycleMs: number[] = [];
      let steady: { ms: number; days: number };
      t0 = performance.now();
      try {
        for (let i = 0; ; i++) {
          const r = await agent.job('reports-daily-rollup');
          if (r.status !== 'succeeded') throw new Error(`reports-daily-rollup ${r.status}: ${r.error}`);
          cycleMs.push(r.ms);
          if (r.summary.HasMore !== true) break;
          if (i > 20) throw new Error('reports-daily-rollup: still HasMore after 20 cycles');
        }
        const s = await agent.job('reports-daily-rollup');
        if (s.status !== 'succeeded') throw new Error(`reports-daily-rollup ${s.status}: ${s.error}`);
        steady = { ms: s.ms, days: Number(s.summary.DaysRolledUp) };
      } finally {
        await agent.stop();
      }
      const [rollup] = await sql<{ rows: number; days: number; settled: number }[]>`
        SELECT (SELECT count(*)::int FROM crm.booking_daily_rollup) AS rows, count(*)::int AS days, count(*) FILTER (WHERE settled)::int AS settled
          FROM crm.booking_rollup_days`;
      await settle(sql, ['crm.booking_daily_rollup', 'crm.booking_rollup_days']);
      ctx.log(`reports: rollup in ${cycleMs.length} cycles, ${((performance.now() - t0) / 1000).toFixed(1)} s (${rollup.rows.toLocaleString('en-US')} rows, ${rollup.settled}/${rollup.days} days settled); steady cycle ${steady.ms.toFixed(0)} ms (${steady.days} days)`);

      // tenant 0's developer manager, through the app's router as the web's tRPC handler calls it
      const [manager] = await sql<{ id: string; tenant_id: string }[]>`SELECT id, tenant_id FROM auth.users WHERE email = 'manager-0@bench.local'`;
      const caller = createCaller(createContextFor({ database, env, logger }, { userId: manager.id, role: 'developer_manager', tenantId: manager.tenant_id }));
      const end = lastMidnight();
      const periods = [
        { label: 'a month', from: new Date(end.getTime() - 30 * DAY_MS) },
        { label: 'a quarter', from: new Date(end.getTime() - 91 * DAY_MS) },
        { label: 'a year', from: new Date(end.getTime() - 365 * DAY_MS) },
      ];
      const metrics: Metric[] = [];
      for (const p of periods) {
        const input = { from: p.from, to: end };
        const first = await caller.reports.funnel(input); // warm-up
        const ms: number[] = [];
        for (let i = 0; i < runs; i++) {
          const t1 = performance.now();
          await caller.reports.funnel(input);
          ms.push(performance.now() - t1);
        }
        const p95 = percentile([...ms].sort((a, b) => a - b), 95);
        ctx.log(`reports: ${p.label} (${first.created.toLocaleString('en-US')} bookings): median ${median(ms).toFixed(0)} ms, p95 ${p95.toFixed(0)} ms`);
        metrics.push(sampled({
          case: c, metric: `reports.funnel, ${p.label} (${first.created.toLocaleString('en-US')} bookings)`, unit: 'ms',
          budget: `median and p95 ≤ ${READ_BUDGET_MS} ms`, pass: median(ms) <= READ_BUDGET_MS && p95 <= READ_BUDGET_MS,
          note: `developer manager of one of ${TENANTS} tenants, [${p.from.toISOString().slice(0, 10)}, ${end.toISOString().slice(0, 10)}), createCaller (role check, zod input and output, agent names); ${runs} calls after 1 warm-up`,
        }, ms));
      }

      // the CSV of the month through the route's handler: session cookie, roles, input, the whole body read
      const { token } = await createSession(database.db, manager.id, 1);
      const monthUrl = `http://bench.local/api/reports/bookings.csv?from=${periods[0]!.from.toISOString()}&to=${end.toISOString()}`;
      const csv = async () => {
        const res = await bookingsCsvResponse(database, logger, new Request(monthUrl, { headers: { cookie: `${SESSION_COOKIE}=${token}` } }));
        if (res.status !== 200) throw new Error(`bookings.csv: HTTP ${res.status}`);
        return (await res.text()).split('\r\n').length - 2; // the header and the empty piece after the last CRLF
      };
      const lines = await csv(); // warm-up
      const csvMs: number[] = [];
      for (let i = 0; i < CSV_RUNS; i++) {
        const t1 = performance.now();
        await csv();
        csvMs.push(performance.now() - t1);
      }
      metrics.push(sampled({
        case: c, metric: `bookings.csv, a month (${lines.toLocaleString('en-US')} lines)`, unit: 'ms',
        note: `the route's handler in process (session lookup, keyset pages of 1,000, the whole body read); ${CSV_RUNS} downloads after 1 warm-up; a download, not a screen read: no budget`,
      }, csvMs));
      metrics.push(sampled({
        case: c, metric: `rollup cycle, a year from nothing (${cycleMs.length} cycles)`, unit: 'ms',
        note: `job reports-daily-rollup through the worker's job runner until HasMore false: ${rollup.rows.toLocaleString('en-US')} rollup rows, ${rollup.settled} of ${rollup.days} days settled; total ${(cycleMs.reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s`,
      }, cycleMs));
      metrics.push({ case: c, metric: `rollup cycle, steady (${steady.days} unsettled days)`, unit: 'ms', value: steady.ms, note: 'one more cycle once caught up: the days whose bookings are still under way, rolled up again' });
      return metrics;
    } finally {
      await database.close();
      await sql.end({ timeout: 5 });
    }
  },
};
