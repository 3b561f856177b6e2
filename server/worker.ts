import http from 'node:http';
import { createDatabase, isPostgresClosedConnectionWrite } from './platform/db';
import { loadEnv } from './platform/env';
import { createLogger } from './platform/logger';
import { startTracing } from './platform/tracing';
import { collectProcessMetrics, renderMetrics } from './platform/metrics';
import { createKafka } from './platform/kafka/client';
import { exitUnlessTopicsExist } from './platform/kafka/startup-check';
import { startConsumer, type RunningConsumer } from './platform/kafka/consumer-runner';
import { bindConsumerLagMetrics } from './platform/kafka/lag';
import { JobScheduler } from './platform/jobs/scheduler';
import { pruneJobRuns } from './platform/jobs/run-log';
import { bindOutboxMetrics, } from './platform/outbox/relay';
import { bindCatalogMetrics } from './catalog/retention-metrics';
import { bindHoldExpirationMetrics } from './chessboard/metrics';
import { outboxChannel } from './platform/outbox/write';
import { createJobs } from './jobs';
import { consumers } from './consumers';

/**
 * The sidecar: node-cron schedules every job, runs every Kafka consumer, wakes the relay on NOTIFY,
 * serves /metrics and /health. SIGTERM/SIGINT: stop ticks, let the batch in hand commit or roll
 * back, stop consumers after the message in hand, exit 0.
 */
async function main(): Promise<void> {
  const env = loadEnv();
  // a missing topic ends the worker here with one line naming it and `npm run kafka:topics`
  // (rather than kafkajs's "This server does not host this topic-partition" from a consumer later)
  await exitUnlessTopicsExist(env);
  const logger = createLogger('worker', { level: env.LOG_LEVEL });
  // A PostgreSQL restart must not end the worker: postgres.js throws this one outside any promise when a
  // transaction's connection dies (see isPostgresClosedConnectionWrite); the transaction already failed
  // and is retried by its job / consumer, the pool reconnects. Any other uncaught exception still ends it.
  process.on('uncaughtException', (e) => {
    if (isPostgresClosedConnectionWrite(e)) {
      logger.error({ err: { message: (e as Error).message } }, 'postgres.js wrote to a closed connection (database restart?); the transaction failed, the pool reconnects');
      return;
    }
    logger.fatal({ err: { message: (e as Error)?.message, stack: (e as Error)?.stack } }, 'uncaught exception');
    logger.flush();
    process.exit(1);
  });
  // OpenTelemetry traces (OTEL_TRACES_EXPORTER, off by default): job cycles, relay batches, consumers
  const tracing = await startTracing(env, 'pin-worker');
  const database = createDatabase(env.DATABASE_URL, { max: 20, applicationName: 'pin-worker' });
  bindOutboxMetrics(database);
  bindCatalogMetrics(database, env.DELISTED_RETENTION_PERIOD_MS);
  bindHoldExpirationMetrics(database, env.HOLD_EXPIRATION_GRACE_MS);
  collectProcessMetrics();
  const kafka = createKafka(env, logger, '-worker');
  bindConsumerLagMetrics(kafka, env);
  const scheduler = new JobScheduler({ database, env, logger, kafka });
  const jobs = createJobs();
  for (const job of Object.values(jobs)) scheduler.register(job);

  let healthy = true;
  const running: RunningConsumer[] = [];
  const server = http.createServer(async (req, res) => {
    if (req.url === '/metrics') {
      const { body, contentType } = await renderMetrics();
      res.writeHead(200, { 'content-type': contentType }).end(body);
    } else if (req.url === '/health') {
      let db = false;
      try { await database.sql`SELECT 1`; db = true; } catch { /* reported below */ }
      const ok = healthy && db;
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: ok ? 'ok' : 'degraded', db, consumers: running.length, jobs: scheduler.list().map((j) => ({ name: j.job.name, nextRun: j.nextRun() })) }));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(env.WORKER_METRICS_PORT, '127.0.0.1', resolve));
  logger.info({ port: env.WORKER_METRICS_PORT }, 'worker metrics and health listening');

  // NOTIFY from a writing transaction wakes the relay; the cron tick covers a lost notification
  const relay = scheduler.get('outbox-relay')!;
  let kick: Promise<unknown> | null = null;
  let again = false;
  const wake = () => {
    if (kick) { again = true; return; }
    kick = relay.runNow('schedule').finally(() => {
      kick = null;
      if (again) { again = false; wake(); }
    });
  };
  for (const name of ['crm', 'chessboard'] as const) await database.sql.listen(outboxChannel(name), wake);

  // Jobs first: joining a consumer group waits until Kafka has dropped the members of a crashed worker
  // (up to the session timeout, 30 s); a restarted worker must not leave the safety net and the relay
  // idle for that long (found by the kill -9 fault scenario, server/faults).
  scheduler.start();
  wake();
  for (const def of consumers) {
    if (def.topics.length === 0) continue;
    running.push(await startConsumer(def, { database, env, logger, kafka }));
    logger.info({ consumer: def.name }, 'consumer started');
  }
  const pruneTimer = setInterval(() => void pruneJobRuns(database.db, env.JOB_RUNS_RETENTION_MS).catch(() => {}), 3600_000);
  logger.info({ jobs: scheduler.list().map((j) => ({ name: j.job.name, nextRun: j.nextRun() })) }, 'worker started');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    healthy = false;
    logger.info({ signal }, 'worker stopping');
    clearInterval(pruneTimer);
    await scheduler.stop();
    await Promise.allSettled(running.map((c) => c.stop()));
    server.close();
    await database.close();
    await tracing.shutdown(); // flushes the spans of the last cycles
    logger.info('worker stopped');
    logger.flush();
    setTimeout(() => process.exit(0), 50);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((e) => {
  console.error(`worker failed to start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
