import type postgres from 'postgres';
import type { BenchCase } from '../lib/context';
import { cpuWindow } from '../lib/cpu';
import { rawClient } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { restoreBookingState } from '../lib/stack-state';
import { FREE_PROGRAM_A, sagaDealId, sagaObjectId } from '../lib/stack';
import { trpcClient, type BookingJson } from '../lib/trpc-http';

/**
 * The booking saga end to end at a steady 100 commands/s for 60 s: booking.create and booking.confirm
 * over HTTP tRPC (`next start`, signed in as pin_manager) with the real worker running (relay on
 * NOTIFY, chessboard consumer). Open loop: a command is sent every 10 ms whether or not the previous
 * ones have answered; each created booking is confirmed by one of the next commands. Every hop is read
 * back from the database's own timestamps (one clock):
 *   crm tx        crm.outbox.created_at (now() of the command's transaction — its start, so the
 *                 first hop includes the rest of that transaction)
 *   published     crm.outbox.published_at (after the broker acknowledged)
 *   applied       chessboard.inbox.processed_at (consumer chessboard.crm-property-object-status)
 *   status-changed published   chessboard.outbox.published_at of the row caused by that message
 */

const RATE = 100;
const CONSUMER = 'chessboard.crm-property-object-status';
const STATUS_CHANGED = 'pin.chessboard.property-object-status-changed.v1';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
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

export const sagaLatencyCase: BenchCase = {
  name: 'saga-latency',
  title: 'saga hop latency at 100 commands/s over HTTP tRPC',
  async run(ctx) {
    const { url } = await ctx.stack.database();
    const sql = rawClient(url);
    const seconds = ctx.quick ? 6 : 60;
    const warmupSeconds = ctx.quick ? 2 : 5;
    try {
      await ctx.stack.stopWorker();
      await restoreBookingState(sql); // booking-commands may have run before on this database
      const base = await ctx.stack.startWeb();
      await ctx.stack.startWorker();
      const api = trpcClient(base, await ctx.stack.signIn());
      await waitFor('the worker to publish the seed backlog', 180_000, () => idle(sql));

      let nextDeal = 1;
      const confirms: BookingJson[] = [];
      const httpMs: number[] = [];
      const failures: string[] = [];
      const inFlight = new Set<Promise<void>>();
      const drive = async (durationS: number, record: boolean, onSend: () => void = () => {}) => {
        const t0 = performance.now();
        const total = durationS * RATE;
        for (let k = 0; k < total; k++) {
          await sleep(t0 + (k * 1000) / RATE - performance.now());
          const confirm = confirms.shift();
          const i = confirm ? 0 : nextDeal++;
          const sent = performance.now();
          onSend();
          const p = (confirm
            ? api.mutation<BookingJson>('booking.confirm', { bookingId: confirm.id, expectedVersion: confirm.version }).then(() => undefined)
            : api.mutation<BookingJson>('booking.create', { dealId: sagaDealId(i), propertyObjectId: sagaObjectId(i), programId: FREE_PROGRAM_A })
              .then((b) => { confirms.push(b); }))
            .then(() => { if (record) httpMs.push(performance.now() - sent); })
            .catch((e: Error) => { failures.push(e.message); })
            .finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
        await Promise.all(inFlight);
        return (performance.now() - t0) / 1000;
      };

      ctx.log(`saga-latency: warm-up ${warmupSeconds} s at ${RATE}/s`);
      await drive(warmupSeconds, false);
      await waitFor('the warm-up to drain', 120_000, () => idle(sql));
      const [{ start }] = await sql<{ start: string }[]>`SELECT now()::text AS start`;
      ctx.log(`saga-latency: measuring ${seconds} s at ${RATE} commands/s`);
      const cpu = cpuWindow();
      const sendStart = performance.now();
      let lastSend = 0;
      const wallS = await drive(seconds, true, () => { lastSend = performance.now(); });
      const sendRate = (seconds * RATE - 1) / ((lastSend - sendStart) / 1000);
      const [{ end }] = await sql<{ end: string }[]>`SELECT now()::text AS "end"`;
      const cpuUse = cpu();
      ctx.log(`saga-latency: ${cpuUse.summary}`);
      // a command that failed is part of the result (reported, and the case fails), not a crash of the bench
      const failed = failures.length ? `; ${failures.length} commands FAILED (first: ${failures[0]})` : '';
      const [{ n: sent }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.outbox WHERE created_at >= ${start}::timestamptz AND created_at <= ${end}::timestamptz`;
      await waitFor('every event of the window to reach the chessboard and be republished', 180_000, async () => {
        const [r] = await sql<{ applied: number; republished: number; outstanding: number }[]>`SELECT
          (SELECT count(*) FROM crm.outbox o JOIN chessboard.inbox i ON i.consumer = ${CONSUMER} AND i.message_id = o.message_id
            WHERE o.created_at >= ${start}::timestamptz AND o.created_at <= ${end}::timestamptz)::int AS applied,
          (SELECT count(*) FROM chessboard.outbox WHERE published_at IS NULL)::int AS outstanding,
          0 AS republished`;
        return r.applied >= sent && r.outstanding === 0;
      });

      const rows = await sql<{ topic: string; result: string; detail: string | null; publish: number; consume: number; applied: number; republish: number | null; total: number | null }[]>`
        SELECT o.topic, i.result, i.detail,
               extract(epoch FROM o.published_at - o.created_at) * 1000 AS publish,
               extract(epoch FROM i.processed_at - o.published_at) * 1000 AS consume,
               extract(epoch FROM i.processed_at - o.created_at) * 1000 AS applied,
               extract(epoch FROM co.published_at - i.processed_at) * 1000 AS republish,
               extract(epoch FROM co.published_at - o.created_at) * 1000 AS total
        FROM crm.outbox o
        JOIN chessboard.inbox i ON i.consumer = ${CONSUMER} AND i.message_id = o.message_id
        LEFT JOIN chessboard.outbox co ON co.topic = ${STATUS_CHANGED} AND co.payload->>'causationId' = o.message_id::text
        WHERE o.created_at >= ${start}::timestamptz AND o.created_at <= ${end}::timestamptz`;
      const num = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null).map(Number);
      const notApplied = rows.filter((r) => r.result !== 'applied').length;
      const outcomes = new Map<string, number>();
      for (const r of rows.filter((x) => x.result !== 'applied')) {
        const key = `${r.topic.replace('pin.crm.', '')} ${r.result}: ${r.detail ?? ''}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
      const republished = rows.filter((r) => r.republish !== null).length;
      const c = 'saga-latency';
      const strip = (m: Metric): Metric => { delete m.samples; return m; };
      const applied = sampled({ case: c, metric: 'crm tx → chessboard applied', unit: 'ms', budget: 'p99 ≤ 250 ms (SLA < 60 s)',
        note: `${rows.length} events (${sendRate.toFixed(0)} commands/s sent; all answered after ${wallS.toFixed(1)} s); ${notApplied} not 'applied'${outcomes.size ? ` (${[...outcomes].map(([k, v]) => `${v}× ${k}`).join('; ')})` : ''}; ${republished} status-changed events${failed}; ${cpuUse.summary}` },
      num(rows.map((r) => r.applied)));
      applied.pass = applied.stats!.p99 <= 250 && failures.length === 0;
      return [
        strip(applied),
        strip(sampled({ case: c, metric: 'hop 1: crm tx → published (crm.outbox)', unit: 'ms' }, num(rows.map((r) => r.publish)))),
        strip(sampled({ case: c, metric: 'hop 2: published → applied (chessboard.inbox)', unit: 'ms' }, num(rows.map((r) => r.consume)))),
        strip(sampled({ case: c, metric: 'hop 3: applied → status-changed published', unit: 'ms' }, num(rows.map((r) => r.republish)))),
        strip(sampled({ case: c, metric: 'crm tx → status-changed published', unit: 'ms' }, num(rows.map((r) => r.total)))),
        strip(sampled({ case: c, metric: `HTTP command latency at ${RATE}/s`, unit: 'ms' }, httpMs)),
      ];
    } finally {
      await ctx.stack.stopWorker();
      await sql.end({ timeout: 5 });
    }
  },
};
