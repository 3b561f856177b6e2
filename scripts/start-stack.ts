import { createTopics, DATA_DIR, ensureDatabase, ensureInfra, redact, takeOverSignals } from './infra/index';
import { freePort } from './infra/postgres';
import { platformEnvSchema } from '../server/platform/env';
import { runMigrations } from '../server/platform/migrate';
import { seed } from './seed';
import { buildWeb, localProfileDataKey, startLogFormat, startProcess, waitForHttp, type Proc } from './stack';

/**
 * `npm start`: PostgreSQL and Kafka (started here unless DATABASE_URL / KAFKA_BROKERS are set),
 * migrations, demo data, `next build`, then web (PORT, default 3000) and worker. `-- --no-web` leaves
 * the web out (run `npm run dev` next to it while working on the UI).
 *
 * Ctrl-C / SIGTERM stops everything this command started, in order: web and worker first (each gets
 * SIGTERM and SHUTDOWN_TIMEOUT_MS to finish what it holds, then SIGKILL), then Kafka, then PostgreSQL;
 * gone within SHUTDOWN_TIMEOUT_MS + ~4 s (10 s with the default 5 s). scripts/start.mjs runs this
 * script in a process group of its own, so the terminal's Ctrl-C does not reach the broker and the
 * database before the processes that use them have stopped.
 */
const log = (l: string) => console.log(`[start] ${l}`);
const STOP_BUDGET_MS = 10_000;

async function main(): Promise<void> {
  const startedAt = Date.now();
  const withWeb = !process.argv.includes('--no-web');
  const shutdownTimeoutMs = parseShutdownTimeout();
  const appsGraceMs = shutdownTimeoutMs + 1_000;
  const infra = await ensureInfra({ profile: 'dev', dataRoot: process.env.PIN_DATA_DIR || undefined, log: (l) => log(l) });
  const databaseUrl = infra.startedPostgres ? await ensureDatabase(infra.databaseUrl, 'pin') : infra.databaseUrl;
  const prefix = process.env.KAFKA_TOPIC_PREFIX ?? '';
  log(`database ${redact(databaseUrl)}, kafka ${infra.kafkaBrokers}`);
  log('creating Kafka topics');
  await createTopics(infra.kafkaBrokers, prefix);
  log('applying migrations');
  await runMigrations(databaseUrl);
  log('seeding demo data');
  await seed(databaseUrl, log);
  const port = Number(process.env.PORT ?? 3000);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS: infra.kafkaBrokers,
    KAFKA_TOPIC_PREFIX: prefix,
    NODE_ENV: 'production',
    PROFILE_DATA_KEY: localProfileDataKey(process.env.PIN_DATA_DIR || DATA_DIR),
    WORKER_METRICS_PORT: process.env.WORKER_METRICS_PORT ?? String(await portOr(9464)),
    WEB_METRICS_PORT: process.env.WEB_METRICS_PORT ?? String(await portOr(9465)),
    LOG_FORMAT: startLogFormat(process.env.LOG_FORMAT, Boolean(process.stdout.isTTY)),
  };
  if (withWeb) await buildWeb(env, log, process.argv.includes('--rebuild'));
  // node with tsx's loader, not the tsx CLI: the CLI SIGKILLs its child when a relayed SIGTERM is not
  // acknowledged within 30 ms, which would cut the worker's shutdown short on a busy machine
  const procs: Proc[] = [startProcess('worker', process.execPath, ['--import', 'tsx', 'server/main/worker.ts'], env)];
  if (withWeb) procs.push(startProcess('web', process.execPath, ['--import', 'tsx', 'server/main/web-server.ts', '-p', String(port), '-H', '127.0.0.1'], env));
  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    const t0 = Date.now();
    log(`stopping ${procs.map((p) => p.name).join(' and ')} (deadline ${shutdownTimeoutMs} ms), then Kafka and PostgreSQL ...`);
    await Promise.allSettled(procs.map(async (p) => {
      const how = await p.stop(appsGraceMs);
      log(`${p.name} stopped (${how}, ${Date.now() - t0} ms)`);
    }));
    // what is left of the 10 s budget goes to Kafka's controlled shutdown (PostgreSQL's fast shutdown takes < 1 s)
    await infra.stop({ kafkaTimeoutMs: Math.max(1_500, STOP_BUDGET_MS - (Date.now() - t0) - 1_500) });
    log(`stopped in ${Date.now() - t0} ms`);
    process.exit(code);
  };
  takeOverSignals(() => void stop());
  for (const p of procs) p.child.on('exit', (code) => { if (!stopping) { log(`${p.name} exited with ${code}`); void stop(1); } });
  if (withWeb) {
    await waitForHttp(`http://127.0.0.1:${port}/api/health`, 120_000, log);
    log(`ready: http://localhost:${port}  (metrics: worker http://127.0.0.1:${env.WORKER_METRICS_PORT}/metrics, web http://127.0.0.1:${env.WEB_METRICS_PORT}/metrics)`);
  } else {
    await waitForHttp(`http://127.0.0.1:${env.WORKER_METRICS_PORT}/health`, 120_000, log);
    log(`ready without the web (worker metrics: http://127.0.0.1:${env.WORKER_METRICS_PORT}/metrics) after ${Math.round((Date.now() - startedAt) / 1000)} s`);
  }
  log('demo users: see README (password demo-password-1). Ctrl-C stops everything.');
}

/** SHUTDOWN_TIMEOUT_MS as web and worker read it (the same zod rule), for the grace given to them here. */
function parseShutdownTimeout(): number {
  const parsed = platformEnvSchema.shape.SHUTDOWN_TIMEOUT_MS.safeParse(process.env.SHUTDOWN_TIMEOUT_MS);
  if (!parsed.success) throw new Error(`invalid configuration: SHUTDOWN_TIMEOUT_MS ${parsed.error.issues[0]?.message} (got "${process.env.SHUTDOWN_TIMEOUT_MS}")`);
  return parsed.data;
}

async function portOr(preferred: number): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => void freePort().then(resolve));
    s.listen(preferred, '127.0.0.1', () => s.close(() => resolve(preferred)));
  });
}

main().catch((e) => {
  console.error(`[start] ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
