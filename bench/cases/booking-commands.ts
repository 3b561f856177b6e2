import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import type { BenchCase, BenchContext } from '../lib/context';
import { cpuWindow } from '../lib/cpu';
import { rawClient } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { restoreBookingState } from '../lib/stack-state';
import { commandDealId, FREE_PROGRAM_A, md5Uuid, type WebOptions } from '../lib/stack';
import { median } from '../lib/stats';
import { trpcClient, type BookingJson } from '../lib/trpc-http';

/**
 * booking.create + booking.confirm over HTTP tRPC against the web (server/main/web-server.ts, in each of
 * WEB_VARIANTS below), 32 concurrent clients (each:
 * create a booking on its own Application deal, then confirm it), signed in as pin_manager. The worker
 * is stopped during this case: what is measured is the command path (HTTP → tRPC → session → one
 * transaction with the booking, deal, timeline and outbox rows); the relay and consumers are the
 * subject of the saga case. The baseline: the same transactions (same statements and rows) issued by
 * 32 postgres.js loops over a pool of 20 connections, the web app's pool size.
 */

const CLIENTS = 32;
const commandObjectId = (i: number) => md5Uuid(`bench:command-object:${i}`);

interface Load {
  wallMs: number;
  latencies: number[];
  errors: string[];
}

async function runClients(bookings: number, first: number, step: (i: number, record: (ms: number) => void) => Promise<void>): Promise<Load> {
  const latencies: number[] = [];
  const errors: string[] = [];
  let next = first;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    for (;;) {
      const i = next++;
      if (i >= first + bookings) return;
      try {
        await step(i, (ms) => latencies.push(ms));
      } catch (e) {
        errors.push((e as Error).message);
        if (errors.length > 20) throw new Error(`too many failed commands, first: ${errors[0]}`);
      }
    }
  }));
  return { wallMs: performance.now() - t0, latencies, errors };
}

const timedCall = async <T>(record: (ms: number) => void, fn: () => Promise<T>): Promise<T> => {
  const t0 = performance.now();
  const out = await fn();
  record(performance.now() - t0);
  return out;
};

/** The rows booking.create / booking.confirm write, as plain SQL in one transaction each (statement for statement). */
function rawCommands(sql: postgres.Sql, userId: string) {
  const envelope = (topic: string, type: string, b: Record<string, unknown>, payload: Record<string, unknown>, now: Date, correlationId: string) => ({
    messageId: randomUUID(), type, contractVersion: 1, aggregateType: 'Booking', aggregateId: b.id, occurredAt: now.toISOString(),
    tenantId: b.tenant_id, correlationId, causationId: null, payload: { bookingId: b.id, dealId: b.deal_id, propertyObjectId: b.property_object_id,
      tenantId: b.tenant_id, bookingVersion: b.version, ...payload }, topic,
  });
  const writeEvent = async (tx: postgres.TransactionSql, e: ReturnType<typeof envelope>, correlationId: string) => {
    const { topic, ...body } = e;
    await Promise.all([
      tx`INSERT INTO crm.outbox (message_id, topic, key, aggregate_type, aggregate_id, payload, headers)
        VALUES (${body.messageId}, ${topic}, ${String(body.aggregateId)}, 'Booking', ${String(body.aggregateId)}, ${tx.json(body as never)},
                ${tx.json({ correlationId, causationId: null, contractVersion: '1' })})`,
      tx`SELECT pg_notify('pin_outbox_crm', '')`,
    ]);
    return body.messageId;
  };
  const timeline = (tx: postgres.TransactionSql, b: Record<string, unknown>, action: string, from: string | null, to: string, now: Date, correlationId: string, messageId: string) =>
    tx`INSERT INTO crm.booking_timeline (booking_id, tenant_id, at, actor_type, actor_id, action, from_status, to_status, reason, correlation_id, message_ids, booking_version)
       VALUES (${b.id as string}, ${b.tenant_id as string}, ${now}, 'user', ${userId}, ${action}, ${from}, ${to}, NULL, ${correlationId}, ${tx.json([messageId])}, ${b.version as number})`;
  return {
    async create(dealId: string, propertyObjectId: string): Promise<{ id: string; version: number }> {
      return sql.begin(async (tx) => {
        const now = new Date();
        const correlationId = randomUUID();
        // the three reads sent together, as create-booking.ts does (the program's and the object's tenant checked after)
        const [[deal], [program], [view]] = await Promise.all([
          tx`SELECT * FROM crm.deals WHERE id = ${dealId} FOR UPDATE`,
          tx`SELECT id, tenant_id, is_paid, reserve_duration_minutes, booking_duration_hours FROM crm.booking_programs WHERE id = ${FREE_PROGRAM_A}`,
          tx`SELECT tenant_id, status, deleted FROM crm.property_objects WHERE id = ${propertyObjectId}`,
        ]);
        if (program.tenant_id !== deal.tenant_id || view.tenant_id !== deal.tenant_id || view.deleted || view.status === 'Sold' || view.status === 'Hidden') throw new Error('not bookable');
        const b = {
          id: randomUUID(), tenant_id: deal.tenant_id, deal_id: dealId, property_object_id: propertyObjectId, program_id: program.id, status: 'Reserved',
          reserve_expires_at: new Date(now.getTime() + program.reserve_duration_minutes * 60_000), booking_expires_at: null, booked_at: null,
          payment_status: 'NotRequired', contract_document: null, receipt_document: null, created_by: userId, closed_reason: null, closed_at: null,
          version: 1, created_at: now, updated_at: now,
        };
        const event = envelope('pin.crm.booking-created.v1', 'BookingCreated', b, {
          programId: b.program_id, status: 'Reserved', reserveExpiresAt: b.reserve_expires_at.toISOString(), createdAt: now.toISOString(),
        }, now, correlationId);
        // the independent writes sent together, as create-booking.ts does
        await Promise.all([
          tx`INSERT INTO crm.bookings ${tx(b)}`,
          tx`UPDATE crm.deals SET status = 'Booking', version = version + 1, updated_at = ${now} WHERE id = ${dealId} AND status = 'Application'`,
          writeEvent(tx, event, correlationId),
          timeline(tx, b, 'create', null, 'Reserved', now, correlationId, event.messageId),
        ]);
        return { id: b.id, version: 1 };
      });
    },
    async confirm(bookingId: string, expectedVersion: number): Promise<void> {
      await sql.begin(async (tx) => {
        const now = new Date();
        const correlationId = randomUUID();
        // the lock and the program (through the booking's program_id) sent together, as lockBookingWithProgram does
        const [[b], [program]] = await Promise.all([
          tx`SELECT * FROM crm.bookings WHERE id = ${bookingId} FOR UPDATE`,
          tx`SELECT id, tenant_id, is_paid, reserve_duration_minutes, booking_duration_hours FROM crm.booking_programs
            WHERE id = (SELECT program_id FROM crm.bookings WHERE id = ${bookingId})`,
        ]);
        if (b.version !== expectedVersion || program.tenant_id !== b.tenant_id) throw new Error('version conflict');
        const next = { ...b, status: 'Booked', booked_at: now, booking_expires_at: new Date(now.getTime() + program.booking_duration_hours * 3600_000), version: b.version + 1, updated_at: now };
        const event = envelope('pin.crm.booking-confirmed.v1', 'BookingConfirmed', next, {
          status: 'Booked', bookedAt: now.toISOString(), bookingExpiresAt: next.booking_expires_at.toISOString(),
        }, now, correlationId);
        // the independent writes sent together, as confirm-booking.ts does
        const [updated] = await Promise.all([
          tx`UPDATE crm.bookings SET status = ${next.status}, payment_status = ${b.payment_status}, reserve_expires_at = ${b.reserve_expires_at},
              booking_expires_at = ${next.booking_expires_at}, booked_at = ${now}, contract_document = ${b.contract_document}, receipt_document = ${b.receipt_document},
              closed_reason = ${b.closed_reason}, closed_at = ${b.closed_at}, version = ${next.version}, updated_at = ${now}
            WHERE id = ${bookingId} AND version = ${b.version} RETURNING id`,
          writeEvent(tx, event, correlationId),
          timeline(tx, next, 'confirm', 'Reserved', 'Booked', now, correlationId, event.messageId),
        ]);
        if (updated.length !== 1) throw new Error('version conflict');
      });
    },
  };
}

/**
 * How the web serves the commands: the default is what `npm start` runs (tRPC on our node:http adapter,
 * one process); the others are measured in the same run to compare against.
 */
const WEB_VARIANTS: { label: string; options: Partial<WebOptions> }[] = [
  { label: 'node:http adapter, 1 web process', options: { processes: 1, trpcThroughNext: false } },
  { label: 'Next.js route, 1 web process', options: { processes: 1, trpcThroughNext: true } },
  { label: 'node:http adapter, 2 web processes (WEB_CONCURRENCY=2)', options: { processes: 2, trpcThroughNext: false } },
];
/**
 * `BENCH_WEB_VARIANTS=0` (or `0,2`): only those webs of WEB_VARIANTS, by index — to measure a change of
 * the default web (index 0, the judged one) without the other two's ~2/3 of the case's time.
 */
const selectedVariants = (): typeof WEB_VARIANTS => {
  const wanted = process.env.BENCH_WEB_VARIANTS?.split(',').map((s) => Number(s.trim()));
  if (!wanted) return WEB_VARIANTS;
  const picked = WEB_VARIANTS.filter((_, i) => wanted.includes(i));
  if (!picked.length || picked.length !== wanted.length) throw new Error(`BENCH_WEB_VARIANTS=${process.env.BENCH_WEB_VARIANTS}: indexes of 0..${WEB_VARIANTS.length - 1}`);
  return picked;
};

export const bookingCommandsCase: BenchCase = {
  name: 'booking-commands',
  title: 'booking.create + booking.confirm over HTTP tRPC, 32 clients',
  async run(ctx: BenchContext) {
    const { url, fixture } = await ctx.stack.database();
    await ctx.stack.stopWorker();
    const cookie = await ctx.stack.signIn();
    const sql = rawClient(url);
    const pool = postgres(url, { max: 20, onnotice: () => {}, connection: { application_name: 'pin-bench-raw' } });
    const runs = Math.min(ctx.runs, 3);
    const bookings = fixture.commandDeals;
    const warmup = Math.min(500, Math.floor(bookings / 5));
    const c = 'booking-commands';
    try {
      const [{ id: userId }] = await sql<{ id: string }[]>`SELECT id FROM auth.users WHERE email = 'pin-manager@pin.local'`;
      const raw = rawCommands(pool, userId);
      const direct = (i: number, record: (ms: number) => void) => (async () => {
        const b = await timedCall(record, () => raw.create(commandDealId(i + 1), commandObjectId(i + 1)));
        await timedCall(record, () => raw.confirm(b.id, b.version));
      })();
      const check = async (what: string, load: Load) => {
        const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.bookings WHERE status = 'Booked' AND deal_id IN (
          SELECT bench.uuid('bench:command-deal:' || i) FROM generate_series(1, ${bookings}) i)`;
        if (load.errors.length || n !== bookings) throw new Error(`${what}: ${n} of ${bookings} bookings Booked, ${load.errors.length} errors (${load.errors[0] ?? ''})`);
      };
      const p99 = (l: number[]) => [...l].sort((a, b) => a - b)[Math.ceil(l.length * 0.99) - 1];

      // the raw baseline: warm-up, then the measured runs
      await restoreBookingState(sql);
      await runClients(warmup, 0, direct);
      const rawRates: number[] = [];
      const rawLat: number[] = [];
      for (let r = 0; r < runs; r++) {
        await restoreBookingState(sql);
        const d = await runClients(bookings, 0, direct);
        await check('raw run', d);
        rawRates.push(d.latencies.length / (d.wallMs / 1000));
        rawLat.push(...d.latencies);
        ctx.log(`booking-commands: raw SQL run ${r + 1}/${runs}: ${Math.round(rawRates.at(-1)!)} cmd/s`);
      }
      const rawMedian = median(rawRates);

      const metrics: Metric[] = [];
      for (const variant of selectedVariants()) {
        const v = WEB_VARIANTS.indexOf(variant);
        const base = await ctx.stack.startWeb(variant.options);
        const api = trpcClient(base, cookie);
        const http = (i: number, record: (ms: number) => void) => (async () => {
          const b = await timedCall(record, () => api.mutation<BookingJson>('booking.create', { dealId: commandDealId(i + 1), propertyObjectId: commandObjectId(i + 1), programId: FREE_PROGRAM_A }));
          await timedCall(record, () => api.mutation<BookingJson>('booking.confirm', { bookingId: b.id, expectedVersion: b.version }));
        })();
        // warm-up on the first deals (JIT, connection pools, Next route compilation), then restore
        await restoreBookingState(sql);
        await runClients(warmup, 0, http);
        const rates: number[] = [];
        const lat: number[] = [];
        const webMsPerCommand: number[] = [];
        const cpuNotes: string[] = [];
        for (let r = 0; r < runs; r++) {
          await restoreBookingState(sql);
          const window = cpuWindow();
          const h = await runClients(bookings, 0, http);
          const cpu = window();
          cpuNotes.push(cpu.summary);
          await check(`HTTP run (${variant.label})`, h);
          rates.push(h.latencies.length / (h.wallMs / 1000));
          lat.push(...h.latencies);
          webMsPerCommand.push((1000 * (cpu.byGroup.web ?? 0)) / h.latencies.length);
          ctx.log(`booking-commands: ${variant.label}: run ${r + 1}/${runs}: HTTP ${Math.round(rates.at(-1)!)} cmd/s (p99 ${p99(h.latencies).toFixed(0)} ms), web CPU ${webMsPerCommand.at(-1)!.toFixed(2)} ms/command`);
        }
        const suffix = v === 0 ? '' : ` — ${variant.label}`;
        const main = v === 0;
        metrics.push(sampled({ case: c, metric: `throughput, ${CLIENTS} clients (HTTP tRPC)${suffix}`, unit: 'cmd/s', ratio: median(rates) / rawMedian, ratioLabel: 'of raw SQL',
          ...(main ? { budget: '≥ 300 cmd/s', pass: median(rates) >= 300 } : {}),
          note: `${variant.label}; ${bookings * 2} commands per run (create + confirm of ${bookings} bookings); worker stopped; HTTP run 1: ${cpuNotes[0]}` }, rates));
        const latency = sampled({ case: c, metric: `command latency (HTTP tRPC)${suffix}`, unit: 'ms', ...(main ? { budget: 'p99 ≤ 100 ms' } : {}) }, lat);
        if (main) latency.pass = latency.stats!.p99 <= 100;
        delete latency.samples; // tens of thousands of samples: the JSON keeps the summary only
        metrics.push(latency);
        metrics.push(sampled({ case: c, metric: `web CPU per command${suffix}`, unit: 'ms', ...(main ? { budget: '≤ 2.5 ms', pass: median(webMsPerCommand) <= 2.5 } : {}),
          note: 'CPU seconds of the web process group (/proc) over the run ÷ commands' }, webMsPerCommand));
      }
      await restoreBookingState(sql);
      await ctx.stack.startWeb(); // the other cases get the default web
      metrics.push(sampled({ case: c, metric: `throughput, ${CLIENTS} clients (raw SQL, pool 20)`, unit: 'cmd/s' }, rawRates));
      const rawLatency = sampled({ case: c, metric: 'command latency (raw SQL)', unit: 'ms' }, rawLat);
      delete rawLatency.samples;
      metrics.push(rawLatency);
      return metrics;
    } finally {
      await pool.end({ timeout: 5 });
      await sql.end({ timeout: 5 });
    }
  },
};
