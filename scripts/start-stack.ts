import { createTopics, ensureDatabase, ensureInfra, redact } from './infra/index';
import { freePort } from './infra/postgres';
import { runMigrations } from '../server/platform/migrate';
import { seed } from './seed';
import { bin, buildWeb, startProcess, waitForHttp, type Proc } from './stack';

/**
 * `npm start`: PostgreSQL and Kafka (started here unless DATABASE_URL / KAFKA_BROKERS are set),
 * migrations, demo data, `next build`, then web (PORT, default 3000) and worker. Ctrl-C stops
 * everything this command started.
 */
const log = (l: string) => console.log(`[start] ${l}`);

async function main(): Promise<void> {
  const infra = await ensureInfra({ profile: 'dev' });
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
    WORKER_METRICS_PORT: process.env.WORKER_METRICS_PORT ?? String(await portOr(9464)),
    WEB_METRICS_PORT: process.env.WEB_METRICS_PORT ?? String(await portOr(9465)),
  };
  await buildWeb(env, log, process.argv.includes('--rebuild'));
  const procs: Proc[] = [
    startProcess('worker', bin('tsx'), ['server/worker.ts'], env),
    startProcess('web', bin('tsx'), ['scripts/web-server.ts', '-p', String(port), '-H', '127.0.0.1'], env),
  ];
  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    log('stopping web, worker and infrastructure ...');
    await Promise.allSettled(procs.map((p) => p.stop()));
    await infra.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  for (const p of procs) p.child.on('exit', (code) => { if (!stopping) { log(`${p.name} exited with ${code}`); void stop(1); } });
  await waitForHttp(`http://127.0.0.1:${port}/api/health`, 120_000, log);
  log(`ready: http://localhost:${port}  (metrics: worker http://127.0.0.1:${env.WORKER_METRICS_PORT}/metrics, web http://127.0.0.1:${env.WEB_METRICS_PORT}/metrics)`);
  log('demo users: see README (password demo-password-1). Ctrl-C stops everything.');
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
