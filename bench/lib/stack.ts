import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import type postgres from 'postgres';
import { createTopics, DATA_DIR } from '../../scripts/infra/index';
import { freePort } from '../../scripts/infra/postgres';
import { seed } from '../../scripts/seed';
import { idFor } from '../../scripts/seed-data';
import { bin, localProfileDataKey, startProcess, waitForHttp, type Proc } from '../../scripts/stack';
import type { BenchDatabases } from './db';
import { rawClient } from './db';
import { saveBookingState } from './stack-state';
import { buildWebSnapshot } from './web-build';

export const PIN_MANAGER = 'pin-manager@pin.local';
export const DEMO_PASSWORD = 'demo-password-1';
export const TENANT_A = idFor('tenant:A');
export const FREE_PROGRAM_A = idFor('program:A:free');

/** What the stack database holds besides the demo seed (ids are md5-derived, so cases can compute them). */
export interface StackFixture {
  /** a 1,000-unit building (4 sections × 25 floors × 10) for the grid case */
  gridProjectId: string;
  gridBuildingId: string;
  /** Free objects of tenant A for the saga (their ids: sagaObjectId(i), i = 1..n) */
  sagaObjects: number;
  /** Application deals of tenant A: commandDealId(i) for booking-commands, sagaDealId(i) for the saga */
  commandDeals: number;
  sagaDeals: number;
}

export const commandDealId = (i: number) => md5Uuid(`bench:command-deal:${i}`);
export const sagaDealId = (i: number) => md5Uuid(`bench:saga-deal:${i}`);
export const sagaObjectId = (i: number) => md5Uuid(`bench:saga-object:${i}`);

/** The uuid bench.uuid(text) gives in PostgreSQL (md5, version 5, variant 8), so fixtures generated in SQL can be named from TypeScript. */
export function md5Uuid(text: string): string {
  const h = createHash('md5').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20)}`;
}

/** How the bench's web runs: WEB_CONCURRENCY processes; tRPC through our node:http adapter or through Next.js (server/main/web-server.ts). */
export interface WebOptions {
  processes: number;
  trpcThroughNext: boolean;
}
const DEFAULT_WEB: WebOptions = { processes: 1, trpcThroughNext: false };

/**
 * The web app (`next build` of a source snapshot if stale, then server/main/web-server.ts as `npm start` runs it; see web-build.ts) and the worker (`tsx server/main/worker.ts`) of
 * the HTTP cases, on one bench database seeded with the demo data plus the bench fixture, and their
 * own Kafka topic prefix. Started on first use; the worker can be stopped and started between cases.
 */
export class BenchStack {
  url?: string;
  fixture?: StackFixture;
  baseUrl?: string;
  readonly prefix: string;
  /** WEB_METRICS_TOKEN of the bench's web: cases read its /api/metrics with it */
  readonly metricsToken = randomBytes(24).toString('hex');
  private web?: Proc;
  private webOptions?: WebOptions;
  private worker?: Proc;
  private workerPort = 0;

  constructor(private readonly o: {
    brokers: string; databases: BenchDatabases; logDir: string; log: (l: string) => void; quick: boolean; suffix: string;
  }) {
    this.prefix = `bench${o.suffix}.`;
  }

  private env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      DATABASE_URL: this.url!,
      KAFKA_BROKERS: this.o.brokers,
      KAFKA_TOPIC_PREFIX: this.prefix,
      NODE_ENV: 'production',
      PROFILE_DATA_KEY: localProfileDataKey(DATA_DIR),
      LOG_LEVEL: 'info',
      NEXT_TELEMETRY_DISABLED: '1',
      WEB_METRICS_TOKEN: this.metricsToken,
      // the bench drives hundreds of streams and thousands of reads a second through a few sessions: the
      // per-session stream cap and the per-user read limit would measure their refusals, not the stack
      LIVE_STREAMS_PER_SESSION: '10000',
      READ_LIMIT_PER_SECOND: '0',
    };
  }

  /** The stack database: migrated, demo seed, bench fixture. */
  async database(): Promise<{ url: string; fixture: StackFixture }> {
    if (this.url && this.fixture) return { url: this.url, fixture: this.fixture };
    const url = await this.o.databases.create('stack');
    await seed(url, (l) => this.o.log(l));
    const scale = (n: number) => (this.o.quick ? Math.round(n / 10) : n);
    const fixture: StackFixture = {
      gridProjectId: md5Uuid('bench:grid-project'),
      gridBuildingId: md5Uuid('bench:grid-building'),
      sagaObjects: scale(8000),
      commandDeals: scale(5000),
      sagaDeals: scale(8000),
    };
    const sql = rawClient(url);
    try {
      await createStackFixture(sql, fixture);
      await saveBookingState(sql); // every HTTP case restores from here (stack-state.ts)
    } finally {
      await sql.end({ timeout: 5 });
    }
    await createTopics(this.o.brokers, this.prefix);
    this.url = url;
    this.fixture = fixture;
    return { url, fixture };
  }

  /** The web, started (or restarted, on a new port) with `options`; the default is what `npm start` runs. */
  async startWeb(options: Partial<WebOptions> = {}): Promise<string> {
    const want = { ...DEFAULT_WEB, ...options };
    if (this.baseUrl && this.webOptions && JSON.stringify(want) === JSON.stringify(this.webOptions)) return this.baseUrl;
    await this.web?.stop();
    this.baseUrl = undefined;
    await this.database();
    const dir = await buildWebSnapshot(this.env(), (l) => this.o.log(l), path.join(this.o.logDir, 'next-build.log'));
    const port = await freePort();
    const env = {
      ...this.env(),
      WEB_CONCURRENCY: String(want.processes),
      WEB_TRPC_THROUGH_NEXT: want.trpcThroughNext ? '1' : '0',
      WEB_METRICS_PORT: '0', // the cases read /api/metrics with WEB_METRICS_TOKEN; no fixed port shared with other stacks
    };
    // BENCH_WEB_CPU_PROF=<dir>: V8 CPU profiles of the web processes (written when they stop; one file per process)
    const prof = process.env.BENCH_WEB_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WEB_CPU_PROF}`] : [];
    this.web = startProcess('web', process.execPath, [...prof, '--import', 'tsx', path.join(dir, 'server/main/web-server.ts'), '-p', String(port), '-H', '127.0.0.1'],
      env, path.join(this.o.logDir, 'web.log'));
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForHttp(`${baseUrl}/api/health`, 120_000, (l) => this.o.log(l));
    this.baseUrl = baseUrl;
    this.webOptions = want;
    this.o.log(`web ready on ${baseUrl} (${want.processes} process${want.processes > 1 ? 'es' : ''}, tRPC through ${want.trpcThroughNext ? 'Next.js' : 'node:http'})`);
    return baseUrl;
  }

  async startWorker(): Promise<void> {
    if (this.worker) return;
    await this.database();
    this.workerPort = await freePort();
    const env = { ...this.env(), WORKER_METRICS_PORT: String(this.workerPort) };
    const logFile = path.join(this.o.logDir, 'worker.log');
    // BENCH_WORKER_CPU_PROF=<dir>: V8 CPU profile of the worker (written when it stops)
    this.worker = process.env.BENCH_WORKER_CPU_PROF
      ? startProcess('worker', process.execPath, ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WORKER_CPU_PROF}`, '--import', 'tsx', 'server/main/worker.ts'], env, logFile)
      : startProcess('worker', bin('tsx'), ['server/main/worker.ts'], env, logFile);
    await waitForHttp(`http://127.0.0.1:${this.workerPort}/health`, 60_000, (l) => this.o.log(l));
    this.o.log('worker ready');
  }

  async stopWorker(): Promise<void> {
    await this.worker?.stop();
    this.worker = undefined;
  }

  /** auth.signIn over HTTP; returns the Cookie header value of the session. */
  async signIn(email = PIN_MANAGER): Promise<string> {
    const base = this.baseUrl ?? await this.startWeb();
    const res = await fetch(`${base}/api/trpc/auth.signIn`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ json: { email, password: DEMO_PASSWORD } }),
    });
    if (!res.ok) throw new Error(`auth.signIn failed: HTTP ${res.status} ${await res.text()}`);
    const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('pin_session='));
    if (!cookie) throw new Error('auth.signIn set no pin_session cookie');
    return cookie;
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.worker?.stop(), this.web?.stop()]);
    this.worker = undefined;
    this.web = undefined;
    this.webOptions = undefined;
    this.baseUrl = undefined;
  }
}

async function createStackFixture(sql: postgres.Sql, f: StackFixture): Promise<void> {
  await sql.unsafe(`
    INSERT INTO chessboard.projects (id, tenant_id, name, city, property_objects_free_count, property_objects_total_count)
    VALUES ('${f.gridProjectId}', '${TENANT_A}', 'ЖК «Бенчмарк»', 'Санкт-Петербург', 1000, 1000),
           ('${md5Uuid('bench:saga-project')}', '${TENANT_A}', 'ЖК «Сага»', 'Санкт-Петербург', ${f.sagaObjects}, ${f.sagaObjects})`);
  await sql.unsafe(`
    INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors)
    VALUES ('${f.gridBuildingId}', '${TENANT_A}', '${f.gridProjectId}', 'Корпус 1000', 4, 25)`);
  await sql.unsafe(`
    INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors)
    SELECT bench.uuid('bench:saga-building:' || b), '${TENANT_A}', '${md5Uuid('bench:saga-project')}', 'Сага ' || b, 4, 25
    FROM generate_series(0, ${Math.ceil(f.sagaObjects / 1000) - 1}) b`);
  // the grid building: a realistic mix of statuses, with live timers on the held cells
  await sql.unsafe(`
    INSERT INTO chessboard.property_objects (id, tenant_id, project_id, building_id, section, floor, number, rooms, area, price, status,
      reserved_until, booked_until, hold_deal_id, sold_at, status_source, version)
    SELECT bench.uuid('bench:grid-object:' || u), '${TENANT_A}', '${f.gridProjectId}', '${f.gridBuildingId}',
           u / 250 + 1, (u % 250) / 10 + 1, ((u / 250 + 1) * 10000 + ((u % 250) / 10 + 1) * 100 + u % 10)::text,
           u % 4, 30 + (u % 70), 5000000 + u * 1000,
           CASE WHEN u % 10 = 1 THEN 'Reserved' WHEN u % 10 = 2 THEN 'Booked' WHEN u % 10 = 3 THEN 'Sold' WHEN u % 50 = 4 THEN 'Hidden' ELSE 'Free' END,
           CASE WHEN u % 10 = 1 THEN now() + interval '45 minutes' END,
           CASE WHEN u % 10 = 2 THEN now() + interval '40 hours' END,
           CASE WHEN u % 10 IN (1, 2) THEN bench.uuid('bench:grid-deal:' || u) END,
           CASE WHEN u % 10 = 3 THEN now() - interval '10 days' END,
           'Import', 1
    FROM generate_series(0, 999) u`);
  await sql.unsafe(`
    INSERT INTO chessboard.property_objects (id, tenant_id, project_id, building_id, section, floor, number, rooms, area, price, status, status_source, version)
    SELECT bench.uuid('bench:saga-object:' || i), '${TENANT_A}', '${md5Uuid('bench:saga-project')}', bench.uuid('bench:saga-building:' || ((i - 1) / 1000)),
           ((i - 1) % 1000) / 250 + 1, (((i - 1) % 1000) % 250) / 10 + 1, i::text, 1 + i % 3, 40 + i % 50, 7000000 + i * 100, 'Free', 'Import', 1
    FROM generate_series(1, ${f.sagaObjects}) i`);
  // crm's own view of the objects it may book (DESIGN decision 8), as its projection consumer would fill it;
  // the command bench's objects exist only there (the worker is stopped during that case)
  await sql.unsafe(`
    INSERT INTO crm.property_objects (id, tenant_id, project_id, status, source_version, source_changed_at)
    SELECT bench.uuid('bench:saga-object:' || i), '${TENANT_A}'::uuid, '${md5Uuid('bench:saga-project')}'::uuid, 'Free', 1, now()
    FROM generate_series(1, ${f.sagaObjects}) i
    UNION ALL
    SELECT bench.uuid('bench:command-object:' || i), '${TENANT_A}'::uuid, '${md5Uuid('bench:saga-project')}'::uuid, 'Free', 1, now()
    FROM generate_series(1, ${f.commandDeals}) i`);
  for (const [kind, n] of [['command-deal', f.commandDeals], ['saga-deal', f.sagaDeals]] as const) {
    await sql.unsafe(`
      INSERT INTO crm.deals (id, tenant_id, title, status)
      SELECT bench.uuid('bench:${kind}:' || i), '${TENANT_A}', 'Bench deal ' || i, 'Application'
      FROM generate_series(1, ${n}) i`);
  }
  await sql.unsafe('VACUUM (ANALYZE)');
}
