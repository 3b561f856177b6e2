import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTopics, REPO_ROOT } from '../../scripts/infra/index';
import { seedTarget, TARGET_SCALE, targetId } from '../../scripts/seed-target';
import { TENANTS } from '../../scripts/seed-data';
import type { BenchCase, BenchContext } from '../lib/context';
import { cpuWindow } from '../lib/cpu';
import { rawClient } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { BenchStack, md5Uuid } from '../lib/stack';
import { round } from '../lib/stats';
import { trpcClient, type BookingJson } from '../lib/trpc-http';

/**
 * The console at the specs' target load (`npm run db:seed -- --scale target`: 1,000,000 property
 * objects, 10,000 active bookings): 50 signed-in console users, each with its live stream open, beside
 * booking commands at half of the measured command capacity (answered and applied by the worker), web and
 * worker both running.
 *
 *   users 0–9    ops (ops@pin.local): every tab of the ops dashboard in turn, reconciliation and DLQ included
 *   users 10–29  managers (PIN manager, the two developer managers): a building's grid (1,000 cells), two
 *                drawer opens, the bookings list unfiltered and with two filters, a booking page and its timeline
 *   users 30–49  agents (their own bookings): the list, a booking page and timeline, a grid and a drawer
 *
 * Each user waits 1–3 s between two reads (a person reading the screen). Every read is one tRPC query
 * over HTTP, as the browser sends it; its latency is request → whole answer at the client.
 *
 * Commands: booking.create then booking.confirm, started open-loop at the rate (half of the newest
 * booking-commands record's throughput, or BENCH_TARGET_COMMAND_RATE), on Free objects of buildings
 * nobody watches. The live update delay is measured apart, on PROBE_BUILDINGS buildings that only the
 * probe changes: a probe command's acknowledgement → the next `grid` event on a stream watching that
 * building (the path a user's screen follows: crm outbox → relay → Kafka → chessboard consumer →
 * NOTIFY → SSE). One probe change per building at a time, so the event can only be that change's.
 *
 * The data: BENCH_TARGET_DATABASE_URL (an existing database, seeded by this case if it is not yet;
 * commands and probes leave their bookings in it), else a fresh pinbench_target_* database seeded here
 * (minutes). Under --quick the seed is a tenth of the target.
 */

const USERS = { ops: 10, managers: 20, agents: 20 } as const;
const THINK_MS = [1000, 3000] as const;
const PROBE_BUILDINGS = 5;
const READ_BUDGET_MS = 200;
const COMMAND_BUDGET_MS = 100;
const LIVE_BUDGET_MS = 1000;
/** long enough to give a figure when the consumers lag, not only "missed" */
const PROBE_TIMEOUT_MS = 30_000;

const OPS = 'ops@pin.local';
const MANAGERS = ['pin-manager@pin.local', 'dev-manager@pin.local', 'dev-manager-b@pin.local'];
const AGENTS = ['agent@pin.local', 'agent-b@pin.local'];
const TENANT_A = TENANTS[0].id;

type Api = ReturnType<typeof trpcClient>;

/** The HTTP command throughput of the newest bench record (booking-commands, the judged web), for comparison. */
export function recordedCapacity(recordsDir = path.join(REPO_ROOT, 'bench/records')): { rate: number; file: string } | null {
  const files = fs.existsSync(recordsDir) ? fs.readdirSync(recordsDir).filter((f) => f.endsWith('.json')).sort() : [];
  for (const f of files.reverse()) {
    const record = JSON.parse(fs.readFileSync(path.join(recordsDir, f), 'utf8')) as { metrics: { case: string; metric: string; stats?: { median: number } }[] };
    const m = record.metrics.find((x) => x.case === 'booking-commands' && x.metric === 'throughput, 32 clients (HTTP tRPC)');
    if (m?.stats) return { rate: m.stats.median, file: f };
  }
  return null;
}

/** BENCH_TARGET_COMMAND_RATE: a fixed command rate instead of half of the capacity measured in the run. */
function rateOverride(): number | null {
  const v = process.env.BENCH_TARGET_COMMAND_RATE;
  if (v === undefined) return null;
  const n = Number(v);
  if (!(n > 0)) throw new Error(`BENCH_TARGET_COMMAND_RATE=${v}: a positive number of commands per second`);
  return n;
}

interface Stream { buildingId: string; grids: number[]; ready: Promise<void>; abort: AbortController }

function openStream(base: string, cookie: string, buildingId: string, onError: (e: Error) => void): Stream {
  const abort = new AbortController();
  const grids: number[] = [];
  let readyResolve!: () => void;
  const ready = new Promise<void>((r) => { readyResolve = r; });
  void (async () => {
    const res = await fetch(`${base}/api/events?buildingId=${buildingId}`, { headers: { cookie, accept: 'text/event-stream' }, signal: abort.signal });
    if (!res.ok || !res.body) throw new Error(`GET /api/events: HTTP ${res.status}`);
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const at = performance.now();
      buf += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const event = /^event: (.+)$/m.exec(buf.slice(0, end))?.[1];
        buf = buf.slice(end + 2);
        if (event === 'grid') grids.push(at);
        else if (event === 'ready') readyResolve();
      }
    }
  })().catch((e: Error) => { if (!abort.signal.aborted) onError(e); });
  return { buildingId, grids, ready, abort };
}

/** RSS of the web and worker process groups (children of this bench process), summed per group. */
function rssByGroup(): Record<'web' | 'worker', number> {
  const procs = new Map<number, { ppid: number; cmd: string }>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      procs.set(Number(e), { ppid, cmd: fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch { /* gone */ }
  }
  const out = { web: 0, worker: 0 };
  const ours = (pid: number) => {
    for (let p: number | undefined = pid, d = 0; p && d < 30; d++) {
      if (p === process.pid) return true;
      p = procs.get(p)?.ppid;
    }
    return false;
  };
  for (const [pid, p] of procs) {
    const group = p.cmd.includes('web-server.ts') ? 'web' : p.cmd.includes('worker.ts') ? 'worker' : null;
    if (!group || !ours(pid)) continue;
    try {
      const kib = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      out[group] += kib / 1024;
    } catch { /* gone */ }
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

/** The seeded database of this bench run: a case rerun (bench/run.ts, busy machine) reuses it. */
let prepared: string | undefined;

async function prepareDatabase(ctx: BenchContext): Promise<string> {
  if (prepared) return prepared;
  const scale = ctx.quick
    ? { objects: TARGET_SCALE.objects / 10, activeBookings: TARGET_SCALE.activeBookings / 10, endedBookings: TARGET_SCALE.endedBookings / 10 }
    : TARGET_SCALE;
  const url = process.env.BENCH_TARGET_DATABASE_URL ?? await ctx.databases.create('target');
  const t0 = performance.now();
  const r = await seedTarget(url, scale, (l) => ctx.log(`target-load: ${l}`));
  ctx.log(`target-load: target seed ${r.inserted ? `written in ${((performance.now() - t0) / 1000).toFixed(0)} s` : 'already present'}`);
  prepared = url;
  return url;
}

export const targetLoadCase: BenchCase = {
  name: 'target-load',
  title: '50 console users + booking commands at half capacity, on the target seed (1M objects, 10k active bookings)',
  onlyWhenNamed: true,
  async run(ctx) {
    const c = 'target-load';
    const url = await prepareDatabase(ctx);
    const override = rateOverride();
    const capacityS = ctx.quick ? 5 : 15;
    const warmupS = ctx.quick ? 5 : 15;
    const measuredS = ctx.quick ? 20 : 60;
    const sql = rawClient(url, 4);
    const tag = randomBytes(4).toString('hex');
    const stack = new BenchStack({ brokers: ctx.brokers, databases: ctx.databases, logDir: ctx.logDir, log: ctx.log, quick: ctx.quick, suffix: `${tag}tl` });
    const streams: Stream[] = [];
    const streamErrors: Error[] = [];
    const apis: Api[] = [];
    try {
      // --- the command fixture: Application deals of tenant A, Free objects of buildings nobody watches
      const [{ program }] = await sql<{ program: string }[]>`SELECT id AS program FROM crm.booking_programs WHERE tenant_id = ${TENANT_A} AND NOT is_paid ORDER BY name LIMIT 1`;
      const aBuildings = (await sql<{ id: string }[]>`SELECT id FROM chessboard.buildings
        WHERE tenant_id = ${TENANT_A} AND project_id IN (SELECT id FROM chessboard.projects WHERE name LIKE 'ЖК «%» %-я очередь') ORDER BY id`).map((r) => r.id);
      if (aBuildings.length < PROBE_BUILDINGS + 10) throw new Error(`target-load: ${aBuildings.length} target buildings of tenant A; is the target seed there?`);
      const probeBuildings = aBuildings.slice(0, PROBE_BUILDINGS);
      const commandBuildings = aBuildings.slice(PROBE_BUILDINGS);
      // enough for the capacity burst and then half of it (≤ 250 bookings/s on this hardware) over the run
      const bookingsNeeded = ctx.quick ? 10_000 : 30_000;
      const freeObjects = (await sql<{ id: string }[]>`SELECT po.id FROM chessboard.property_objects po JOIN crm.property_objects v ON v.id = po.id
        WHERE po.building_id IN ${sql(commandBuildings)} AND po.status = 'Free' AND v.status = 'Free' AND NOT v.deleted
          AND NOT EXISTS (SELECT 1 FROM crm.bookings b WHERE b.property_object_id = po.id AND b.status IN ('Reserved', 'AwaitingPayment', 'Booked'))
        ORDER BY md5(po.id::text || ${tag}) LIMIT ${bookingsNeeded}`).map((r) => r.id);
      const probeObjects = new Map<string, string[]>();
      for (const b of probeBuildings) {
        probeObjects.set(b, (await sql<{ id: string }[]>`SELECT po.id FROM chessboard.property_objects po JOIN crm.property_objects v ON v.id = po.id
          WHERE po.building_id = ${b} AND po.status = 'Free' AND v.status = 'Free' ORDER BY md5(po.id::text || ${tag}) LIMIT 200`).map((r) => r.id));
      }
      const probeCount = [...probeObjects.values()].reduce((s, l) => s + l.length, 0);
      const deals = bookingsNeeded + probeCount;
      // bench.uuid() as BenchDatabases.create makes it: a database given by BENCH_TARGET_DATABASE_URL has none yet
      await sql.unsafe(`CREATE SCHEMA IF NOT EXISTS bench`);
      await sql.unsafe(`CREATE OR REPLACE FUNCTION bench.uuid(name text) RETURNS uuid IMMUTABLE STRICT LANGUAGE sql AS
        $$ SELECT (substr(h, 1, 12) || '5' || substr(h, 14, 3) || '8' || substr(h, 18, 15))::uuid FROM (SELECT md5(name) AS h) x $$`);
      await sql`INSERT INTO crm.deals (id, tenant_id, title, status)
        SELECT bench.uuid(${`bench:target-deal:${tag}:`} || i), ${TENANT_A}, 'Нагрузка ' || i, 'Application' FROM generate_series(1, ${deals}::int) i`;
      const dealId = (i: number) => md5Uuid(`bench:target-deal:${tag}:${i}`);
      ctx.log(`target-load: ${freeObjects.length} Free objects for the commands, ${probeCount} for the probes, ${deals} deals`);

      // --- the stack on this database
      stack.url = url;
      stack.fixture = { gridProjectId: targetId('project:0'), gridBuildingId: probeBuildings[0]!, sagaObjects: 0, commandDeals: 0, sagaDeals: 0 };
      await createTopics(ctx.brokers, stack.prefix);
      const base = await stack.startWeb();
      await stack.startWorker();

      // --- what the users read: buildings of each tenant, bookings of each tenant and agent, projects
      const buildingsOf = new Map<string | null, string[]>();
      for (const t of TENANTS) buildingsOf.set(t.id, (await sql<{ id: string }[]>`SELECT id FROM chessboard.buildings WHERE tenant_id = ${t.id} AND floors = 25 AND sections = 4 ORDER BY id`).map((r) => r.id));
      buildingsOf.set(null, [...buildingsOf.get(TENANT_A)!, ...buildingsOf.get(TENANTS[1].id)!]);
      const projectsOf = new Map<string | null, string[]>();
      for (const t of TENANTS) projectsOf.set(t.id, (await sql<{ id: string }[]>`SELECT id FROM chessboard.projects WHERE tenant_id = ${t.id} ORDER BY id`).map((r) => r.id));
      projectsOf.set(null, [...projectsOf.get(TENANT_A)!, ...projectsOf.get(TENANTS[1].id)!]);
      const jobNames = ['booking-expiration', 'property-object-hold-expiration', 'project-aggregates-recalc', 'delisted-retention', 'reconciliation'];

      const samples = new Map<string, number[]>();
      const errors = new Map<string, string[]>();
      // the same reads one at a time before any load: what each costs on this data alone
      const alone = new Map<string, number[]>();
      let measuring = false;
      let aloneMode = false;
      const record = (label: string, ms: number) => {
        const into = measuring ? samples : aloneMode ? alone : null;
        if (!into) return;
        if (!into.has(label)) into.set(label, []);
        into.get(label)!.push(ms);
      };
      const fail = (label: string, e: unknown) => {
        if (!measuring && !aloneMode) return;
        const key = measuring ? label : `${label}, alone`;
        if (!errors.has(key)) errors.set(key, []);
        errors.get(key)!.push((e as Error).message.slice(0, 200));
      };
      const read = async <T>(api: Api, label: string, p: string, input: unknown): Promise<T | undefined> => {
        const t0 = performance.now();
        try {
          const out = await api.query<T>(p, input);
          record(label, performance.now() - t0);
          return out;
        } catch (e) {
          fail(label, e);
          return undefined;
        }
      };

      // --- 50 users signed in, each with its stream open (on the probe buildings: the live delay is read there)
      type User = { email: string; kind: 'ops' | 'manager' | 'agent'; api: Api; tenant: string | null };
      const users: User[] = [];
      const tenantOf = (email: string) => (email.endsWith('-b@pin.local') ? TENANTS[1].id : email.startsWith('pin-manager') || email.startsWith('ops') ? null : TENANT_A);
      const kinds: { kind: User['kind']; emails: string[]; n: number }[] = [
        { kind: 'ops', emails: [OPS], n: ctx.quick ? 2 : USERS.ops },
        { kind: 'manager', emails: MANAGERS, n: ctx.quick ? 4 : USERS.managers },
        { kind: 'agent', emails: AGENTS, n: ctx.quick ? 4 : USERS.agents },
      ];
      for (const k of kinds) {
        for (let i = 0; i < k.n; i++) {
          const email = k.emails[i % k.emails.length]!;
          const cookie = await stack.signIn(email);
          const api = trpcClient(base, cookie);
          apis.push(api);
          users.push({ email, kind: k.kind, api, tenant: tenantOf(email) });
          // a stream on a building the user may see: tenant B's users watch one of theirs, the others the probe buildings
          const watch = tenantOf(email) === TENANTS[1].id ? pick(buildingsOf.get(TENANTS[1].id)!) : probeBuildings[users.length % PROBE_BUILDINGS]!;
          streams.push(openStream(base, cookie, watch, (e) => streamErrors.push(e)));
        }
      }
      await Promise.race([Promise.all(streams.map((s) => s.ready)), sleep(60_000).then(() => { throw new Error(`not every stream got ready in 60 s (${streamErrors[0]?.message ?? 'no error'})`); })]);
      ctx.log(`target-load: ${users.length} users signed in, ${streams.length} streams open`);

      let stop = false;
      const think = () => sleep(THINK_MS[0] + Math.random() * (THINK_MS[1] - THINK_MS[0]));
      const OPS_TABS: [string, string, unknown][] = [
        ['ops overview', 'ops.dashboard.overview', undefined],
        ['ops stuck holds', 'ops.dashboard.stuckHolds', { phase: 'all', sort: 'overdue', dir: 'desc' }],
        ['ops hold releases', 'ops.dashboard.holdReleases', { source: 'ExpirationJob', rangeHours: 168 }],
        ['ops jobs', 'ops.dashboard.jobs', undefined],
        ['ops job runs', 'ops.dashboard.jobRuns', null],
        ['ops messaging', 'ops.dashboard.messaging', undefined],
        ['ops DLQ', 'ops.dashboard.dlqMessages', { includeDecided: false }],
        ['ops catalog', 'ops.dashboard.catalog', undefined],
        ['ops reconciliation', 'ops.dashboard.reconciliation', undefined],
      ];
      const cellIds = (g: unknown): string[] => (g as { cells?: { id: string }[] } | undefined)?.cells?.map((x) => x.id) ?? [];
      type List = { items: { id: string }[]; total?: number };
      const bookingPage = async (api: Api, list: List | undefined) => {
        const id = list?.items.length ? pick(list.items).id : undefined;
        if (!id) return;
        await read(api, 'booking page (booking.byId)', 'booking.byId', { bookingId: id });
        await read(api, 'booking timeline (ops.bookingTimeline)', 'ops.bookingTimeline', { bookingId: id });
      };
      const gridAndDrawer = async (api: Api, tenant: string | null, drawers: number) => {
        const grid = await read<unknown>(api, 'grid of 1,000 cells (chessboard.grid)', 'chessboard.grid', { buildingId: pick(buildingsOf.get(tenant)!) });
        const ids = cellIds(grid);
        if (grid && ids.length !== 1000) fail('grid of 1,000 cells (chessboard.grid)', new Error(`grid had ${ids.length} cells`));
        for (let d = 0; d < drawers && ids.length; d++) {
          await think();
          await read(api, 'drawer (chessboard.object)', 'chessboard.object', { propertyObjectId: pick(ids) });
        }
      };
      const userLoop = async (u: User, index: number) => {
        await sleep(Math.random() * THINK_MS[1]); // not all at once
        let step = index;
        while (!stop) {
          if (u.kind === 'ops') {
            const [label, p, input] = OPS_TABS[step % OPS_TABS.length]!;
            await read(u.api, label, p, p.endsWith('jobRuns') ? { job: jobNames[step % jobNames.length], limit: 100 } : input);
          } else if (u.kind === 'manager') {
            switch (step % 4) {
              case 0: await gridAndDrawer(u.api, u.tenant, 2); break;
              case 1: await bookingPage(u.api, await read<List>(u.api, 'bookings list, no filter', 'booking.list', {})); break;
              case 2: await bookingPage(u.api, await read<List>(u.api, 'bookings list, status + project', 'booking.list',
                { status: ['Reserved', 'AwaitingPayment'], projectId: pick(projectsOf.get(u.tenant)!) })); break;
              default: await bookingPage(u.api, await read<List>(u.api, 'bookings list, deadline within 4 h', 'booking.list',
                { expiringWithinMinutes: 240, sort: 'reserveExpiresAt', direction: 'asc' })); break;
            }
          } else {
            switch (step % 3) {
              case 0: await bookingPage(u.api, await read<List>(u.api, 'bookings list, no filter', 'booking.list', {})); break;
              case 1: await bookingPage(u.api, await read<List>(u.api, 'bookings list, status Booked', 'booking.list', { status: ['Booked'], sort: 'bookingExpiresAt', direction: 'asc' })); break;
              default: await gridAndDrawer(u.api, u.tenant, 1); break;
            }
          }
          step++;
          await think();
        }
      };

      // --- commands: open-loop, a booking (create + confirm) started every 2/rate s
      const commander = trpcClient(base, await stack.signIn('pin-manager@pin.local'), { maxConnections: 32 });
      apis.push(commander);
      const commandMs: number[] = [];
      const commandErrors: string[] = [];
      let nextObject = 0;
      let nextDeal = 1;
      const command = async (fn: () => Promise<BookingJson>): Promise<BookingJson | undefined> => {
        const t0 = performance.now();
        try {
          const out = await fn();
          if (measuring) commandMs.push(performance.now() - t0);
          return out;
        } catch (e) {
          if (measuring) commandErrors.push((e as Error).message.slice(0, 200));
          return undefined;
        }
      };
      const booking = async (objectId: string, deal: string) => {
        const b = await command(() => commander.mutation<BookingJson>('booking.create', { dealId: deal, propertyObjectId: objectId, programId: program }));
        if (b) await command(() => commander.mutation<BookingJson>('booking.confirm', { bookingId: b.id, expectedVersion: b.version }));
      };
      const commandLoop = async () => {
        const pending: Promise<void>[] = [];
        const t0 = performance.now();
        for (let i = 0; !stop; i++) {
          const wait = t0 + (i * 2000) / rate - performance.now();
          if (wait > 0) await sleep(wait);
          if (stop) break;
          const objectId = freeObjects[nextObject++];
          if (!objectId) throw new Error('target-load: out of Free objects for the commands');
          pending.push(booking(objectId, dealId(nextDeal++)));
        }
        await Promise.all(pending);
      };

      // --- the probe: one change at a time per probe building, ack → the next grid event of its streams
      const liveMs: number[] = [];
      let liveMissed = 0;
      const probeLoop = async (buildingId: string) => {
        const watching = streams.filter((s) => s.buildingId === buildingId);
        const objects = probeObjects.get(buildingId)!;
        const waitGrid = async (after: number): Promise<number | null> => {
          const deadline = after + PROBE_TIMEOUT_MS;
          while (performance.now() < deadline) {
            const got = watching.map((s) => s.grids.find((g) => g >= after)).filter((g): g is number => g !== undefined);
            if (got.length) return Math.min(...got) - after;
            await sleep(5);
          }
          return null;
        };
        const observe = async (fn: () => Promise<BookingJson | undefined>) => {
          const out = await fn();
          const ack = performance.now();
          if (!out) return undefined;
          const delay = await waitGrid(ack);
          if (measuring) {
            if (delay === null) liveMissed++;
            else liveMs.push(delay);
          }
          return out;
        };
        await sleep(Math.random() * 1000);
        for (const objectId of objects) {
          if (stop) return;
          const deal = dealId(nextDeal++);
          const b = await observe(() => command(() => commander.mutation<BookingJson>('booking.create', { dealId: deal, propertyObjectId: objectId, programId: program })));
          await sleep(1000);
          if (b && !stop) await observe(() => command(() => commander.mutation<BookingJson>('booking.confirm', { bookingId: b.id, expectedVersion: b.version })));
          await sleep(1000);
        }
      };

      // --- each read alone: one ops user, one PIN manager and one agent, one read at a time, no commands
      {
        aloneMode = true;
        const opsUser = users.find((u) => u.kind === 'ops')!;
        const manager = users.find((u) => u.kind === 'manager')!;
        const agent = users.find((u) => u.kind === 'agent')!;
        for (let r = 0; r < (ctx.quick ? 2 : 3); r++) {
          for (const [label, p, input] of OPS_TABS) await read(opsUser.api, label, p, p.endsWith('jobRuns') ? { job: jobNames[r % jobNames.length], limit: 100 } : input);
          await gridAndDrawer(manager.api, manager.tenant, 1);
          await bookingPage(manager.api, await read<List>(manager.api, 'bookings list, no filter', 'booking.list', {}));
          await bookingPage(manager.api, await read<List>(manager.api, 'bookings list, status + project', 'booking.list', { status: ['Reserved', 'AwaitingPayment'], projectId: pick(projectsOf.get(manager.tenant)!) }));
          await bookingPage(manager.api, await read<List>(manager.api, 'bookings list, deadline within 4 h', 'booking.list', { expiringWithinMinutes: 240, sort: 'reserveExpiresAt', direction: 'asc' }));
          await read<List>(agent.api, 'bookings list, status Booked', 'booking.list', { status: ['Booked'], sort: 'bookingExpiresAt', direction: 'asc' });
        }
        aloneMode = false;
        ctx.log(`target-load: each read alone: ${[...alone].map(([l, xs]) => `${l} ${Math.round(xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!)} ms`).join(', ')}`);
      }

      // --- the capacity of this run: 32 clients back to back for capacityS, no users yet, then the wait until
      // the worker has applied every one of them (the chessboard holds each object as its booking says). The
      // capacity is what the whole stack sustains — commands answered and their events applied — and the
      // load is half of it: a rate the web answers but the worker cannot follow only grows the backlog, and
      // the live updates fall behind with it
      let rate: number;
      let rateSource: string;
      const recorded = recordedCapacity();
      {
        const t0 = performance.now();
        let done = 0;
        let failed = 0;
        const booked: string[] = [];
        const reserved: string[] = [];
        await Promise.all(Array.from({ length: 32 }, async () => {
          while (performance.now() - t0 < capacityS * 1000) {
            const objectId = freeObjects[nextObject++];
            if (!objectId) throw new Error('target-load: out of Free objects for the capacity burst');
            const b = await commander.mutation<BookingJson>('booking.create', { dealId: dealId(nextDeal++), propertyObjectId: objectId, programId: program }).catch(() => undefined);
            if (!b) { failed++; continue; }
            const ok = await commander.mutation<BookingJson>('booking.confirm', { bookingId: b.id, expectedVersion: b.version }).then(() => true, () => false);
            done += ok ? 2 : 1;
            (ok ? booked : reserved).push(objectId);
            if (!ok) failed++;
          }
        }));
        const answeredS = (performance.now() - t0) / 1000;
        const answered = done / answeredS;
        const drainDeadline = performance.now() + 300_000;
        for (;;) {
          const [r] = await sql<{ behind: number }[]>`
            SELECT (SELECT count(*) FROM chessboard.property_objects WHERE id = ANY(${booked}::uuid[]) AND status <> 'Booked')
                 + (SELECT count(*) FROM chessboard.property_objects WHERE id = ANY(${reserved}::uuid[]) AND status = 'Free') AS behind`;
          if (Number(r!.behind) === 0) break;
          if (performance.now() > drainDeadline) throw new Error(`target-load: ${r!.behind} objects of the capacity burst not applied after 300 s`);
          await sleep(250);
        }
        const appliedS = (performance.now() - t0) / 1000;
        const capacity = done / appliedS;
        const recordNote = recorded ? `; the record ${recorded.file} measured ${Math.round(recorded.rate)} cmd/s with the worker stopped` : '';
        rate = override ?? capacity / 2;
        const measured = `${Math.round(capacity)} cmd/s measured here (32 clients, ${capacityS} s: ${Math.round(answered)} cmd/s answered, all applied by the worker ${appliedS.toFixed(1)} s after the start; no users${failed ? `, ${failed} failed` : ''})`;
        rateSource = override ? `BENCH_TARGET_COMMAND_RATE (capacity here ${measured}${recordNote})` : `half of ${measured}${recordNote}`;
        ctx.log(`target-load: commands at ${rate.toFixed(0)} cmd/s: ${rateSource}`);
      }

      // --- run: warm-up, then the measured window
      const loadStart = os.loadavg();
      const loops = [...users.map((u, i) => userLoop(u, i)), commandLoop(), ...probeBuildings.map((b) => probeLoop(b))];
      await sleep(warmupS * 1000);
      const [{ runs_before: runsBefore }] = await sql<{ runs_before: number }[]>`SELECT coalesce(max(id), 0)::int AS runs_before FROM ops.job_runs`;
      measuring = true;
      const cpu = cpuWindow();
      const rss: Record<'web' | 'worker', number>[] = [];
      const measuredStart = performance.now();
      while (performance.now() - measuredStart < measuredS * 1000) {
        rss.push(rssByGroup());
        await sleep(1000);
      }
      measuring = false;
      const usage = cpu();
      const loadEnd = os.loadavg();
      stop = true;
      await Promise.all(loops);
      if (streamErrors.length) throw new Error(`${streamErrors.length} streams failed, first: ${streamErrors[0]!.message}`);

      // --- the figures
      const metrics: Metric[] = [];
      const machine = `load average ${loadStart.map((l) => l.toFixed(1)).join('/')} at start, ${loadEnd.map((l) => l.toFixed(1)).join('/')} at end; ${usage.summary}`;
      // every read the users make, also one that never completed in the window (a page nobody could open is a miss too)
      const expected = [...OPS_TABS.map(([label]) => label), 'grid of 1,000 cells (chessboard.grid)', 'drawer (chessboard.object)', 'bookings list, no filter',
        'bookings list, status + project', 'bookings list, deadline within 4 h', 'bookings list, status Booked', 'booking page (booking.byId)', 'booking timeline (ops.bookingTimeline)'];
      const readLabels = [...new Set([...expected, ...samples.keys(), ...errors.keys()])].sort();
      for (const label of readLabels) {
        const s = samples.get(label) ?? [];
        const errs = errors.get(label) ?? [];
        const m = sampled({ case: c, metric: `read: ${label}`, unit: 'ms', budget: `p95 ≤ ${READ_BUDGET_MS} ms`,
          note: `${s.length} reads completed in the window${errs.length ? `, ${errs.length} failed (${errs[0]})` : ''}` }, s);
        m.pass = s.length > 0 && errs.length === 0 && m.stats!.p95 <= READ_BUDGET_MS;
        metrics.push(m);
      }
      for (const [label, xs] of [...alone].sort()) {
        metrics.push(sampled({ case: c, metric: `read alone (one user, no load): ${label}`, unit: 'ms', note: `${xs.length} reads one at a time before the load` }, xs));
      }
      const measuredRate = commandMs.length / measuredS;
      const cmd = sampled({ case: c, metric: 'command latency (booking.create / confirm, HTTP tRPC)', unit: 'ms', budget: `p99 ≤ ${COMMAND_BUDGET_MS} ms`,
        note: `${commandMs.length} commands in ${measuredS} s (${measuredRate.toFixed(0)} cmd/s; asked ${rate.toFixed(0)}: ${rateSource})${commandErrors.length ? `, ${commandErrors.length} failed (${commandErrors[0]})` : ''}` }, commandMs);
      cmd.pass = commandMs.length > 0 && commandErrors.length === 0 && cmd.stats!.p99 <= COMMAND_BUDGET_MS;
      delete cmd.samples;
      metrics.push(cmd);
      const live = sampled({ case: c, metric: 'live update delay (command ack → grid event)', unit: 'ms', budget: `p99 ≤ ${LIVE_BUDGET_MS} ms`,
        note: `${liveMs.length} probe changes on ${PROBE_BUILDINGS} watched buildings, ${liveMissed} without an event in ${PROBE_TIMEOUT_MS / 1000} s; ${streams.length} streams open` }, liveMs);
      live.pass = liveMs.length > 0 && liveMissed === 0 && live.stats!.p99 <= LIVE_BUDGET_MS;
      metrics.push(live);
      for (const g of ['web', 'worker'] as const) {
        const xs = rss.map((r) => r[g]);
        metrics.push({ case: c, metric: `${g} RSS`, unit: 'MiB', value: round(Math.max(...xs), 1), note: `max of ${xs.length} samples (1/s), last ${xs.at(-1)!.toFixed(0)} MiB; summed over the ${g}'s processes` });
      }
      const jobs = await sql<{ job: string; runs: number; failed: number; p50: number; max: number }[]>`
        SELECT job, count(*)::int AS runs, count(*) FILTER (WHERE status = 'failed')::int AS failed,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at) * 1000)::float AS p50,
               max(extract(epoch FROM finished_at - started_at) * 1000)::float AS max
          FROM ops.job_runs WHERE id > ${runsBefore} AND finished_at IS NOT NULL GROUP BY job ORDER BY job`;
      for (const j of jobs) {
        metrics.push({ case: c, metric: `job ${j.job} during the window`, unit: 'ms', value: round(j.max, 0), note: `${j.runs} runs (${j.failed} failed), median ${j.p50.toFixed(0)} ms, max ${j.max.toFixed(0)} ms` });
      }
      metrics.push({ case: c, metric: 'machine during the window', unit: '', note: machine });
      const [size] = await sql<{ objects: number; active: number }[]>`SELECT (SELECT reltuples::bigint FROM pg_class WHERE oid = 'chessboard.property_objects'::regclass)::int AS objects,
        (SELECT count(*)::int FROM crm.bookings WHERE status IN ('Reserved', 'AwaitingPayment', 'Booked')) AS active`;
      metrics.push({ case: c, metric: 'data', unit: '', note: `${size.objects} property objects (estimate), ${size.active} active bookings at the end; ${users.length} users (${kinds.map((k) => `${k.n} ${k.kind}`).join(', ')}), think time ${THINK_MS[0] / 1000}–${THINK_MS[1] / 1000} s` });
      for (const m of metrics.filter((x) => x.pass === false)) ctx.log(`target-load: MISS ${m.metric}: p95 ${m.stats?.p95?.toFixed(0) ?? '-'} p99 ${m.stats?.p99?.toFixed(0) ?? '-'} ${m.note ?? ''}`);
      return metrics;
    } finally {
      for (const s of streams) s.abort.abort();
      for (const a of apis) a.close();
      await stack.stop();
      await sql.end({ timeout: 5 });
    }
  },
};
