import type { BenchCase } from '../lib/context';
import { cpuWindow } from '../lib/cpu';
import { restoreBookingState } from '../lib/stack-state';
import { rawClient } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { md5Uuid, PIN_MANAGER } from '../lib/stack';

/**
 * The live feed (server/chessboard/live-feed.ts, app/api/events) under load: 500 SSE clients of
 * `next start` (5 signed-in pin_manager sessions, 100 streams each) watching 4 buildings, while the
 * bench commits 50 chessboard status changes per second for 10 s, spread over those buildings. Each
 * commit is what a chessboard command commits as far as the feed can tell: the object's new status
 * and version, and the outbox NOTIFY naming the tenant and the building, in one transaction (issued
 * in SQL, so the web's CPU is the feed's alone; the worker is stopped).
 *
 * Measured: commit → each watching client received `grid` (per commit and client: the first `grid`
 * the client received after the commit was acknowledged; under coalescing one event answers several
 * commits), fingerprint reads per commit from the web's own counter pin_live_feed_fingerprint_reads_total
 * on /metrics, the web's CPU over the window. The clients run in the bench process, so its event loop
 * is part of the measured latency.
 */

const CLIENTS = 500;
const SESSIONS = 5;
const RATE = 50; // commits per second
const SECONDS = 10;

/** The grid building and up to three saga buildings — the quick fixture (÷ 10) has one saga building only. */
const WATCHED_BUILDINGS = [md5Uuid('bench:grid-building'), ...[0, 1, 2].map((b) => md5Uuid(`bench:saga-building:${b}`))];

interface Client {
  buildingId: string;
  grids: number[]; // performance.now() of each grid event
  ready: Promise<void>;
  abort: AbortController;
}

function openClient(base: string, cookie: string, buildingId: string, onError: (e: Error) => void): Client {
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
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const event = /^event: (.+)$/m.exec(block)?.[1];
        if (event === 'grid') grids.push(at);
        else if (event === 'ready') readyResolve();
      }
    }
  })().catch((e: Error) => {
    if (!abort.signal.aborted) onError(e);
  });
  return { buildingId, grids, ready, abort };
}

async function fingerprintReads(base: string, token: string): Promise<number> {
  const res = await fetch(`${base}/api/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /api/metrics: HTTP ${res.status}`);
  const line = (await res.text()).split('\n').find((l) => l.startsWith('pin_live_feed_fingerprint_reads_total'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

export const liveFeedCase: BenchCase = {
  name: 'live-feed',
  title: `${CLIENTS} SSE clients on 4 buildings, ${RATE} chessboard commits/s`,
  async run(ctx) {
    const { url } = await ctx.stack.database();
    await ctx.stack.stopWorker();
    const base = await ctx.stack.startWeb();
    const token = ctx.stack.metricsToken;
    const clients = ctx.quick ? CLIENTS / 10 : CLIENTS;
    const seconds = ctx.quick ? 3 : SECONDS;
    const sql = rawClient(url, 8);
    const errors: Error[] = [];
    const open: Client[] = [];
    const flipped = new Set<string>();
    try {
      // the saga cases before this one leave buildings without Free objects: start from the saved state
      await restoreBookingState(sql);
      const buildings = (await sql<{ id: string }[]>`SELECT id FROM chessboard.buildings WHERE id IN ${sql(WATCHED_BUILDINGS)}`)
        .map((r) => r.id).sort((a, b) => WATCHED_BUILDINGS.indexOf(a) - WATCHED_BUILDINGS.indexOf(b));
      const [{ tenant_id: tenantId }] = await sql<{ tenant_id: string }[]>`SELECT tenant_id FROM chessboard.buildings WHERE id = ${buildings[0]!}`;
      // Free objects of each building, flipped Free ↔ Hidden (a status change the grid shows; no booking involved)
      const objects = new Map<string, string[]>();
      for (const b of buildings) {
        const rows = await sql<{ id: string }[]>`SELECT id FROM chessboard.property_objects WHERE building_id = ${b} AND status = 'Free' ORDER BY id LIMIT 200`;
        if (rows.length === 0) throw new Error(`live-feed: building ${b} has no Free object to flip`);
        objects.set(b, rows.map((r) => r.id));
      }
      const cookies: string[] = [];
      for (let s = 0; s < SESSIONS; s++) cookies.push(await ctx.stack.signIn(PIN_MANAGER));
      for (let i = 0; i < clients; i++) open.push(openClient(base, cookies[i % SESSIONS]!, buildings[i % buildings.length]!, (e) => errors.push(e)));
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await Promise.race([
          Promise.all(open.map((c) => c.ready)),
          new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`not every SSE client got ready in 60 s (${errors[0]?.message ?? 'no error'})`)), 60_000); }),
        ]);
      } finally {
        clearTimeout(timer);
      }
      ctx.log(`live-feed: ${clients} SSE clients ready`);

      const commit = async (buildingId: string, objectId: string) => {
        flipped.add(objectId);
        await sql.begin(async (tx) => {
          await tx`UPDATE chessboard.property_objects SET status = CASE status WHEN 'Free' THEN 'Hidden' ELSE 'Free' END,
                     version = version + 1, status_changed_at = now(), updated_at = now() WHERE id = ${objectId}`;
          await tx`SELECT pg_notify('pin_outbox_chessboard', ${JSON.stringify({ t: tenantId, b: [buildingId] })})`;
        });
        return performance.now();
      };

      const readsBefore = await fingerprintReads(base, token);
      const cpu = cpuWindow();
      const commits: { buildingId: string; at: number }[] = [];
      const total = RATE * seconds;
      const t0 = performance.now();
      const pending: Promise<void>[] = [];
      for (let i = 0; i < total; i++) {
        // open-loop schedule: commit i at t0 + i/RATE, whatever the earlier ones took
        const wait = t0 + (i * 1000) / RATE - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const b = buildings[i % buildings.length]!;
        const list = objects.get(b)!;
        pending.push(commit(b, list[Math.floor(i / buildings.length) % list.length]!).then((at) => { commits.push({ buildingId: b, at }); }));
      }
      await Promise.all(pending);
      const commitWallS = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 3000)); // the last events
      const usage = cpu();
      const reads = (await fingerprintReads(base, token)) - readsBefore;

      const latencies: number[] = [];
      let missed = 0;
      for (const c of open) {
        for (const k of commits) {
          if (k.buildingId !== c.buildingId) continue;
          const got = c.grids.find((g) => g >= k.at);
          if (got === undefined) missed++;
          else latencies.push(got - k.at);
        }
      }
      if (errors.length) throw new Error(`${errors.length} SSE clients failed, first: ${errors[0]!.message}`);
      const webCpuS = usage.byGroup.web ?? 0;
      const perBuildingCommit = reads / commits.length; // every commit names one building
      const c = 'live-feed';
      const lat = sampled({ case: c, metric: `commit → client got grid (${clients} SSE clients)`, unit: 'ms', budget: 'p99 ≤ 1,000 ms',
        note: `${commits.length} commits in ${commitWallS.toFixed(1)} s (${(commits.length / commitWallS).toFixed(0)}/s) over ${buildings.length} buildings; ${latencies.length} deliveries, ${missed} missed; ${usage.summary}` }, latencies);
      lat.pass = missed === 0 && lat.stats!.p99 <= 1000;
      delete lat.samples; // tens of thousands of samples: the JSON keeps the summary only
      const metrics: Metric[] = [
        lat,
        { case: c, metric: 'fingerprint reads per commit (each names 1 building)', unit: '', value: perBuildingCommit, budget: '≤ 1 per building',
          pass: perBuildingCommit <= 1, note: `${reads} reads for ${commits.length} commits (pin_live_feed_fingerprint_reads_total on /metrics)` },
        { case: c, metric: 'web CPU over the window', unit: 's', value: webCpuS,
          note: `${(100 * webCpuS / usage.wallS).toFixed(0)}% of one core over ${usage.wallS.toFixed(0)} s` },
      ];
      ctx.log(`live-feed: p50 ${lat.stats!.median.toFixed(0)} ms, p99 ${lat.stats!.p99.toFixed(0)} ms, ${missed} missed, ${reads} reads / ${commits.length} commits, web CPU ${webCpuS.toFixed(1)} s`);
      return metrics;
    } finally {
      for (const c of open) c.abort.abort();
      // the flipped objects back to Free (other cases count Free objects)
      if (flipped.size) await sql`UPDATE chessboard.property_objects SET status = 'Free' WHERE id IN ${sql([...flipped])}`.catch(() => {});
      await sql.end({ timeout: 5 });
    }
  },
};
