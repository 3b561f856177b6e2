import type postgres from 'postgres';
import type { BenchCase, BenchContext } from '../lib/context';
import { cpuWindow } from '../lib/cpu';
import { rawClient } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { restoreBookingState } from '../lib/stack-state';
import { FREE_PROGRAM_A, sagaDealId, sagaObjectId } from '../lib/stack';
import { trpcClient, type BookingJson } from '../lib/trpc-http';

/**
 * The booking saga end to end: booking.create and booking.confirm over HTTP tRPC (`next start`, signed
 * in as pin_manager) with the real worker running (relay on NOTIFY, chessboard consumer). Three cases:
 *   saga-sequential  one booking at a time: the next command is sent once the previous event is applied
 *                    and its status change published — the latency of the path itself, nothing queued
 *   saga-capacity    the saga's maximum rate measured first (closed loop), then an open loop at 60 % of it
 *   saga-overload    an open loop at 100 commands/s (more than this machine's web can do): no command may
 *                    fail, and the backlog must drain
 * Every hop is read back from the database's own timestamps (one clock):
 *   crm tx        crm.outbox.created_at (now() of the command's transaction — its start, so the
 *                 first hop includes the rest of that transaction)
 *   published     crm.outbox.published_at (after the broker acknowledged)
 *   applied       chessboard.inbox.processed_at (consumer chessboard.crm-property-object-status)
 *   status-changed published   chessboard.outbox.published_at of the row caused by that message
 */

const CONSUMER = 'chessboard.crm-property-object-status';
const STATUS_CHANGED = 'pin.chessboard.property-object-status-changed.v1';
const OVERLOAD_RATE = 100;
/**
 * The load generator's connections to the web: a reverse proxy in front of the web holds a bounded
 * upstream pool and queues what does not fit. Without the bound, fetch opened one more connection for
 * every request that found the others busy — thousands at 100/s — and past the server's accept backlog
 * the connects timed out (undici's 10 s connect timeout) and commands failed for the client, not the system.
 */
const UPSTREAM_CONNECTIONS = 64;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>, pollMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

/** Nothing left to publish and both consumers' inboxes stopped growing (the consumers have caught up). */
async function idle(sql: postgres.Sql): Promise<boolean> {
  const probe = () => sql<{ crm: number; cb: number; inboxes: number }[]>`SELECT
    (SELECT count(*) FROM crm.outbox WHERE published_at IS NULL)::int AS crm,
    (SELECT count(*) FROM chessboard.outbox WHERE published_at IS NULL)::int AS cb,
    ((SELECT count(*) FROM chessboard.inbox) + (SELECT count(*) FROM catalog.inbox))::int AS inboxes`.then((r) => r[0]);
  const a = await probe();
  if (a.crm !== 0 || a.cb !== 0) return false;
  await sleep(2000);
  const b = await probe();
  return b.crm === 0 && b.cb === 0 && b.inboxes === a.inboxes;
}

/** crm events of [start, end] the chessboard has applied, and chessboard rows not yet published. */
async function progress(sql: postgres.Sql, start: string, end: string): Promise<{ applied: number; outstanding: number }> {
  const [r] = await sql<{ applied: number; outstanding: number }[]>`SELECT
    (SELECT count(*) FROM crm.outbox o JOIN chessboard.inbox i ON i.consumer = ${CONSUMER} AND i.message_id = o.message_id
      WHERE o.created_at >= ${start}::timestamptz AND o.created_at <= ${end}::timestamptz)::int AS applied,
    (SELECT count(*) FROM chessboard.outbox WHERE published_at IS NULL)::int AS outstanding`;
  return r;
}

const now = async (sql: postgres.Sql) => (await sql<{ t: string }[]>`SELECT now()::text AS t`)[0].t;
const countEvents = async (sql: postgres.Sql, start: string, end: string) => (await sql<{ n: number }[]>`
  SELECT count(*)::int AS n FROM crm.outbox WHERE created_at >= ${start}::timestamptz AND created_at <= ${end}::timestamptz`)[0].n;

interface HopRow { topic: string; result: string; detail: string | null; created: number; appliedAt: number; publish: number; consume: number; applied: number; republish: number | null; total: number | null }

async function hopRows(sql: postgres.Sql, start: string, end: string): Promise<HopRow[]> {
  const rows = await sql<HopRow[]>`
    SELECT o.topic, i.result, i.detail,
           extract(epoch FROM o.created_at) * 1000 AS created,
           extract(epoch FROM i.processed_at) * 1000 AS "appliedAt",
           extract(epoch FROM o.published_at - o.created_at) * 1000 AS publish,
           extract(epoch FROM i.processed_at - o.published_at) * 1000 AS consume,
           extract(epoch FROM i.processed_at - o.created_at) * 1000 AS applied,
           extract(epoch FROM co.published_at - i.processed_at) * 1000 AS republish,
           extract(epoch FROM co.published_at - o.created_at) * 1000 AS total
    FROM crm.outbox o
    JOIN chessboard.inbox i ON i.consumer = ${CONSUMER} AND i.message_id = o.message_id
    LEFT JOIN chessboard.outbox co ON co.topic = ${STATUS_CHANGED} AND co.payload->>'causationId' = o.message_id::text
    WHERE o.created_at >= ${start}::timestamptz AND o.created_at <= ${end}::timestamptz`;
  return rows.map((r) => ({ ...r, created: Number(r.created), appliedAt: Number(r.appliedAt) }));
}

const num = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null).map(Number);
const strip = (m: Metric): Metric => { delete m.samples; return m; };

/** The per-hop lines of a window; the first (crm tx → applied) carries the budget and the note. */
function hopMetrics(c: string, rows: HopRow[], first: { budget?: string; p50Budget?: number; p99Budget?: number; note: string }): Metric[] {
  const notApplied = rows.filter((r) => r.result !== 'applied');
  const outcomes = new Map<string, number>();
  for (const r of notApplied) {
    const key = `${r.topic.replace('pin.crm.', '')} ${r.result}: ${r.detail ?? ''}`;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  const republished = rows.filter((r) => r.republish !== null).length;
  const applied = sampled({ case: c, metric: 'crm tx → chessboard applied', unit: 'ms', budget: first.budget,
    note: `${rows.length} events; ${notApplied.length} not 'applied'${outcomes.size ? ` (${[...outcomes].map(([k, v]) => `${v}× ${k}`).join('; ')})` : ''}; ${republished} status-changed events; ${first.note}` },
  num(rows.map((r) => r.applied)));
  if (first.p99Budget !== undefined) applied.pass = applied.stats!.p99 <= first.p99Budget && applied.stats!.median <= (first.p50Budget ?? Infinity);
  return [
    strip(applied),
    strip(sampled({ case: c, metric: 'hop 1: crm tx → published (crm.outbox)', unit: 'ms' }, num(rows.map((r) => r.publish)))),
    strip(sampled({ case: c, metric: 'hop 2: published → applied (chessboard.inbox)', unit: 'ms' }, num(rows.map((r) => r.consume)))),
    strip(sampled({ case: c, metric: 'hop 3: applied → status-changed published', unit: 'ms' }, num(rows.map((r) => r.republish)))),
    strip(sampled({ case: c, metric: 'crm tx → status-changed published', unit: 'ms' }, num(rows.map((r) => r.total)))),
  ];
}

/** Stops the worker, restores the saved booking state, starts web + worker and waits until the seed backlog is published and consumed. */
async function freshStack(ctx: BenchContext, sql: postgres.Sql) {
  await ctx.stack.stopWorker();
  await restoreBookingState(sql); // another HTTP case may have run before on this database
  const base = await ctx.stack.startWeb();
  await ctx.stack.startWorker();
  const cookie = await ctx.stack.signIn();
  await waitFor('the worker to publish the seed backlog', 180_000, () => idle(sql));
  return { base, cookie };
}

const failureSummary = (failures: string[]) => {
  const kinds = new Map<string, number>();
  for (const f of failures) {
    const k = f.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>').slice(0, 200);
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  return [...kinds].map(([k, v]) => `${v}× ${k}`).join('; ');
};

type Api = ReturnType<typeof trpcClient>;

/**
 * An open loop at `rate` commands/s for `seconds`: a command is sent every 1000/rate ms whether or not
 * the previous ones have answered; each created booking is confirmed by one of the next commands.
 */
function openLoop(api: Api, nextDeal: () => number) {
  const confirms: BookingJson[] = [];
  return async (rate: number, seconds: number, record?: { httpMs: number[]; failures: string[] }) => {
    const inFlight = new Set<Promise<void>>();
    const t0 = performance.now();
    const total = Math.round(seconds * rate);
    let lastSend = t0;
    for (let k = 0; k < total; k++) {
      await sleep(t0 + (k * 1000) / rate - performance.now());
      const confirm = confirms.shift();
      const sent = performance.now();
      lastSend = sent;
      let i = 0;
      if (!confirm) i = nextDeal();
      const p = (confirm
        ? api.mutation<BookingJson>('booking.confirm', { bookingId: confirm.id, expectedVersion: confirm.version }).then(() => undefined)
        : api.mutation<BookingJson>('booking.create', { dealId: sagaDealId(i), propertyObjectId: sagaObjectId(i), programId: FREE_PROGRAM_A })
          .then((b) => { confirms.push(b); }))
        .then(() => { record?.httpMs.push(performance.now() - sent); })
        .catch((e: Error) => { record?.failures.push(e.message); })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    const sendSeconds = (lastSend - t0) / 1000;
    await Promise.all(inFlight);
    return { sent: total, sendRate: total > 1 ? (total - 1) / sendSeconds : total, answeredAfterS: (performance.now() - t0) / 1000 };
  };
}

export const sagaSequentialCase: BenchCase = {
  name: 'saga-sequential',
  title: 'saga hop latency, one booking at a time over HTTP tRPC',
  async run(ctx) {
    const { url } = await ctx.stack.database();
    const sql = rawClient(url);
    const bookings = ctx.quick ? 20 : 200;
    try {
      const { base, cookie } = await freshStack(ctx, sql);
      const api = trpcClient(base, cookie);
      const httpMs: number[] = [];
      // the next command goes once the previous event is applied and its status change published
      const settled = async (appliedBefore: number): Promise<number> => {
        let applied = appliedBefore;
        await waitFor('the event to be applied and republished', 30_000, async () => {
          const [r] = await sql<{ applied: number; outstanding: number }[]>`SELECT
            (SELECT count(*) FROM chessboard.inbox WHERE consumer = ${CONSUMER})::int AS applied,
            (SELECT count(*) FROM chessboard.outbox WHERE published_at IS NULL)::int AS outstanding`;
          applied = r.applied;
          return r.applied > appliedBefore && r.outstanding === 0;
        }, 5);
        return applied;
      };
      const answeredAt: number[] = []; // wall clock (epoch ms) of each answer: the same host clock as PostgreSQL's now()
      const timed = async <T>(f: () => Promise<T>) => { const t = performance.now(); const r = await f(); httpMs.push(performance.now() - t); answeredAt.push(Date.now()); return r; };
      let [{ applied }] = await sql<{ applied: number }[]>`SELECT count(*)::int AS applied FROM chessboard.inbox WHERE consumer = ${CONSUMER}`;
      const run = async (from: number, n: number) => {
        for (let i = from; i < from + n; i++) {
          const b = await timed(() => api.mutation<BookingJson>('booking.create', { dealId: sagaDealId(i), propertyObjectId: sagaObjectId(i), programId: FREE_PROGRAM_A }));
          applied = await settled(applied);
          await timed(() => api.mutation<BookingJson>('booking.confirm', { bookingId: b.id, expectedVersion: b.version }));
          applied = await settled(applied);
        }
      };
      const warmup = ctx.quick ? 5 : 20;
      ctx.log(`saga-sequential: warm-up ${warmup} bookings`);
      await run(1, warmup);
      httpMs.length = 0;
      answeredAt.length = 0;
      const start = await now(sql);
      ctx.log(`saga-sequential: ${bookings} bookings one at a time`);
      const cpu = cpuWindow();
      await run(warmup + 1, bookings);
      const end = await now(sql);
      const cpuUse = cpu();
      const rows = await hopRows(sql, start, end);
      // hop 1 in parts: one event per command, in command order, so the k-th event's command answered at
      // answeredAt[k] (after its commit); the relay cycle that published it is the ops.job_runs row
      // around its published_at (the relay records every cycle that published)
      const parts = await sql<{ created: number; published: number; applied: number; cycle: number | null }[]>`
        SELECT extract(epoch FROM o.created_at) * 1000 AS created, extract(epoch FROM o.published_at) * 1000 AS published,
               (SELECT extract(epoch FROM i.processed_at) * 1000 FROM chessboard.inbox i WHERE i.consumer = ${CONSUMER} AND i.message_id = o.message_id) AS applied,
               (SELECT extract(epoch FROM r.started_at) * 1000 FROM ops.job_runs r
                 WHERE r.job = 'outbox-relay' AND r.started_at <= o.published_at AND r.finished_at >= o.published_at
                 ORDER BY r.started_at DESC LIMIT 1) AS cycle
        FROM crm.outbox o WHERE o.created_at >= ${start}::timestamptz AND o.created_at <= ${end}::timestamptz ORDER BY o.created_at`;
      const answered = parts.length === answeredAt.length ? parts.map((p, k) => ({ ...p, answered: answeredAt[k] })) : [];
      const c = 'saga-sequential';
      const hop1 = [
        // crm commit → applied lies between this (the answer comes after the commit) and crm tx → applied
        // (the transaction starts before it); the target is judged on the latter
        strip(sampled({ case: c, metric: 'HTTP answer (after the crm commit) → chessboard applied', unit: 'ms' },
          answered.map((p) => Number(p.applied) - p.answered))),
        strip(sampled({ case: c, metric: 'hop 1a: crm tx → HTTP answer (the command after now())', unit: 'ms' }, answered.map((p) => p.answered - Number(p.created)))),
        strip(sampled({ case: c, metric: 'hop 1b: HTTP answer → published', unit: 'ms' }, answered.map((p) => Number(p.published) - p.answered))),
        strip(sampled({ case: c, metric: 'hop 1b′: relay cycle start → published', unit: 'ms' }, num(parts.map((p) => (p.cycle === null ? null : Number(p.published) - Number(p.cycle)))))),
      ];
      return [
        ...hopMetrics(c, rows, { budget: 'p50 ≤ 20 ms, p99 ≤ 100 ms', p50Budget: 20, p99Budget: 100, note: `${bookings} bookings (create, then confirm), each sent after the previous event was applied and republished; crm tx is the transaction's start; ${cpuUse.summary}` }),
        ...hop1,
        strip(sampled({ case: c, metric: 'HTTP command latency, one at a time', unit: 'ms' }, httpMs)),
      ];
    } finally {
      await ctx.stack.stopWorker();
      await sql.end({ timeout: 5 });
    }
  },
};

export const sagaCapacityCase: BenchCase = {
  name: 'saga-capacity',
  title: 'saga maximum rate (closed loop), then hop latency at 60 % of it',
  async run(ctx) {
    const { url } = await ctx.stack.database();
    const sql = rawClient(url);
    const maxSeconds = ctx.quick ? 5 : 20;
    const seconds = ctx.quick ? 6 : 30;
    const clients = 16;
    try {
      const { base, cookie } = await freshStack(ctx, sql);
      const api = trpcClient(base, cookie);
      let deal = 0;
      const nextDeal = () => ++deal;

      // 1. the maximum: 16 closed-loop clients (create, then confirm) for maxSeconds, worker running; the
      // saga's rate is the lower of the commands answered per second and the events applied per second
      // (first crm tx → last applied, after the load stopped)
      ctx.log(`saga-capacity: maximum, ${clients} closed-loop clients for ${maxSeconds} s`);
      const maxStart = await now(sql);
      let commands = 0;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: clients }, async () => {
        while (performance.now() - t0 < maxSeconds * 1000) {
          const i = nextDeal();
          const b = await api.mutation<BookingJson>('booking.create', { dealId: sagaDealId(i), propertyObjectId: sagaObjectId(i), programId: FREE_PROGRAM_A });
          await api.mutation<BookingJson>('booking.confirm', { bookingId: b.id, expectedVersion: b.version });
          commands += 2;
        }
      }));
      const commandRate = commands / ((performance.now() - t0) / 1000);
      const maxEnd = await now(sql);
      const maxEvents = await countEvents(sql, maxStart, maxEnd);
      await waitFor('the maximum run to drain', 180_000, async () => {
        const p = await progress(sql, maxStart, maxEnd);
        return p.applied >= maxEvents && p.outstanding === 0;
      });
      const maxRows = await hopRows(sql, maxStart, maxEnd);
      const firstCreated = Math.min(...maxRows.map((r) => r.created));
      const lastApplied = Math.max(...maxRows.map((r) => r.appliedAt));
      const appliedRate = maxRows.length / ((lastApplied - firstCreated) / 1000);
      const maxRate = Math.min(commandRate, appliedRate);
      const rate = Math.max(1, Math.floor(0.6 * maxRate));
      ctx.log(`saga-capacity: ${commandRate.toFixed(0)} commands/s answered, ${appliedRate.toFixed(0)} events/s applied → max ${maxRate.toFixed(0)}/s; offering ${rate}/s`);
      await waitFor('the worker to be idle', 120_000, () => idle(sql));

      // 2. an open loop at 60 % of it
      const record = { httpMs: [] as number[], failures: [] as string[] };
      const start = await now(sql);
      const cpu = cpuWindow();
      const load = await openLoop(api, nextDeal)(rate, seconds, record);
      const end = await now(sql);
      const cpuUse = cpu();
      const sent = await countEvents(sql, start, end);
      await waitFor('every event of the window to be applied and republished', 180_000, async () => {
        const p = await progress(sql, start, end);
        return p.applied >= sent && p.outstanding === 0;
      });
      const rows = await hopRows(sql, start, end);
      const c = 'saga-capacity';
      const failed = record.failures.length ? `; ${record.failures.length} commands FAILED (${failureSummary(record.failures)})` : '';
      const metrics = hopMetrics(c, rows, {
        budget: 'p99 ≤ 250 ms', p99Budget: 250,
        note: `open loop at ${rate} commands/s (${load.sendRate.toFixed(0)} sent) for ${seconds} s = 60 % of the measured maximum; all answered after ${load.answeredAfterS.toFixed(1)} s${failed}; ${cpuUse.summary}`,
      });
      if (record.failures.length) metrics[0].pass = false;
      return [
        { case: c, metric: 'saga maximum (closed loop, 16 clients)', unit: 'cmd/s', value: maxRate,
          note: `${commandRate.toFixed(0)} commands/s answered over HTTP, ${appliedRate.toFixed(0)} events/s applied by the chessboard (first crm tx → last applied, ${maxRows.length} events) — the lower is the maximum` },
        { case: c, metric: 'offered (60 % of the maximum)', unit: 'cmd/s', value: load.sendRate },
        ...metrics,
        strip(sampled({ case: c, metric: `HTTP command latency at ${rate}/s`, unit: 'ms' }, record.httpMs)),
      ];
    } finally {
      await ctx.stack.stopWorker();
      await sql.end({ timeout: 5 });
    }
  },
};

export const sagaOverloadCase: BenchCase = {
  name: 'saga-overload',
  title: `saga at ${OVERLOAD_RATE} commands/s (overload): nothing fails, the backlog drains`,
  async run(ctx) {
    const { url } = await ctx.stack.database();
    const sql = rawClient(url);
    const seconds = ctx.quick ? 6 : 60;
    const warmupSeconds = ctx.quick ? 2 : 5;
    try {
      const { base, cookie } = await freshStack(ctx, sql);
      const api = trpcClient(base, cookie, { maxConnections: UPSTREAM_CONNECTIONS });
      let deal = 0;
      const drive = openLoop(api, () => ++deal);

      ctx.log(`saga-overload: warm-up ${warmupSeconds} s at ${OVERLOAD_RATE}/s`);
      await drive(OVERLOAD_RATE, warmupSeconds);
      await waitFor('the warm-up to drain', 120_000, () => idle(sql));
      const start = await now(sql);
      ctx.log(`saga-overload: ${seconds} s at ${OVERLOAD_RATE} commands/s, at most ${UPSTREAM_CONNECTIONS} connections`);
      const cpu = cpuWindow();
      const record = { httpMs: [] as number[], failures: [] as string[] };
      // the backlog every second: commands waiting for an answer, crm events not yet applied
      const backlog: { atS: number; unapplied: number }[] = [];
      const t0 = performance.now();
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.outbox o
            WHERE o.created_at >= ${start}::timestamptz AND NOT EXISTS (SELECT 1 FROM chessboard.inbox i WHERE i.consumer = ${CONSUMER} AND i.message_id = o.message_id)`;
          backlog.push({ atS: (performance.now() - t0) / 1000, unapplied: r.n });
          await sleep(1000);
        }
      })();
      const load = await drive(OVERLOAD_RATE, seconds, record);
      const end = await now(sql);
      const cpuUse = cpu();
      const sent = await countEvents(sql, start, end);
      let drained = true;
      await waitFor('every event of the window to be applied and republished', 300_000, async () => {
        const p = await progress(sql, start, end);
        return p.applied >= sent && p.outstanding === 0;
      }).catch(() => { drained = false; });
      sampling = false;
      await sampler;
      const drainedAtS = (performance.now() - t0) / 1000;
      api.close();
      const rows = await hopRows(sql, start, end);
      const lastApplied = Math.max(...rows.map((r) => r.appliedAt));
      const firstCreated = Math.min(...rows.map((r) => r.created));
      const peak = backlog.reduce((m, b) => (b.unapplied > m.unapplied ? b : m), { atS: 0, unapplied: 0 });
      const c = 'saga-overload';
      const failed = record.failures.length ? `${record.failures.length} commands FAILED (${failureSummary(record.failures)})` : 'no command failed';
      const metrics = hopMetrics(c, rows, {
        note: `${load.sendRate.toFixed(0)} commands/s sent for ${seconds} s through at most ${UPSTREAM_CONNECTIONS} connections; all answered after ${load.answeredAfterS.toFixed(1)} s; ${failed}; ${cpuUse.summary}`,
      });
      const http = strip(sampled({ case: c, metric: `HTTP command latency at ${OVERLOAD_RATE}/s (incl. the wait for a connection)`, unit: 'ms' }, record.httpMs));
      return [
        { case: c, metric: 'commands failed', unit: '', value: record.failures.length, budget: '0', pass: record.failures.length === 0, note: failed },
        { case: c, metric: 'backlog drained (crm events unapplied → 0), after the load began', unit: 's', value: drained ? (lastApplied - firstCreated) / 1000 : NaN,
          budget: 'drains', pass: drained,
          note: drained
            ? `peak backlog ${peak.unapplied} unapplied events at ${peak.atS.toFixed(0)} s; sending ended at ${seconds} s, every answer at ${load.answeredAfterS.toFixed(0)} s, the last event applied ${((lastApplied - firstCreated) / 1000).toFixed(1)} s after the first was created (${rows.length} events, ${(rows.length / ((lastApplied - firstCreated) / 1000)).toFixed(0)} applied/s overall); checked at ${drainedAtS.toFixed(0)} s`
            : `not drained within 300 s after the load; peak ${peak.unapplied}` },
        ...metrics,
        http,
      ];
    } finally {
      await ctx.stack.stopWorker();
      await sql.end({ timeout: 5 });
    }
  },
};
