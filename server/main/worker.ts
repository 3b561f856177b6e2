import http from 'node:http';
import { createDatabase } from '../platform/db';
import { installWorkerProcessGuards } from '../platform/process-guards';
import { loadEnv } from './env';
import { createLogger } from '../platform/logger';
import { startTracing } from '../platform/tracing';
import { collectProcessMetrics, renderMetrics } from '../platform/metrics';
import { createKafka } from '../platform/kafka/client';
import { exitUnlessTopicsExist } from '../platform/kafka/startup-check';
import { startConsumer, type RunningConsumer } from '../platform/kafka/consumer-runner';
import { bindConsumerLagMetrics } from '../platform/kafka/lag';
import { JobScheduler } from '../platform/jobs/scheduler';
import { pruneJobRuns } from '../platform/jobs/run-log';
import { bindOutboxMetrics } from '../platform/outbox/relay';
import { bindCatalogMetrics } from '../catalog/retention-metrics';
import { bindHoldExpirationMetrics } from '../chessboard/metrics';
import { outboxChannel } from '../platform/outbox/write';
import { OUTBOX_NAMES } from './outboxes';
import { createJobs } from './jobs';
import { consumers } from './consumers';
// the lists the ops modules read (reconciliation's lag) and the contexts' ports
import './registry';

/**
 * The sidecar: node-cron schedules every job, runs every Kafka consumer, wakes the relay on NOTIFY,
 * serves /metrics and /health. SIGTERM/SIGINT: stop ticks, let the batch in hand commit or roll
 * back, stop consumers after the message in hand, exit 0.
 */
async function main(): Promise<void> {
  // a signal during start-up is kept and acted on as soon as there is something to stop (the default
  // action would end the worker with a consumer half-joined)
  let shutdown: ((signal: string) => Promise<void>) | null = null;
  let pendingSignal: string | null = null;
  const onSignal = (signal: string) => { if (shutdown) void shutdown(signal); else pendingSignal ??= signal; };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  const env = loadEnv();
  // a missing topic ends the worker here with one line naming it and `npm run kafka:topics`
  // (rather than kafkajs's "This server does not host this topic-partition" from a consumer later)
  await exitUnlessTopicsExist(env);
  const logger = createLogger('worker', { level: env.LOG_LEVEL, format: env.LOG_FORMAT });
  installWorkerProcessGuards(logger);
  // OpenTelemetry traces (OTEL_TRACES_EXPORTER, off by default): job cycles, relay batches, consumers
  const tracing = await startTracing(env, 'pin-worker');
  const database = createDatabase(env.DATABASE_URL, { max: 20, applicationName: 'pin-worker' });
  bindOutboxMetrics(database, OUTBOX_NAMES);
  bindCatalogMetrics(database, env.DELISTED_RETENTION_PERIOD_MS);
  bindHoldExpirationMetrics(database, env.HOLD_EXPIRATION_GRACE_MS);
  collectProcessMetrics();
  const kafka = createKafka(env, logger, '-worker');
  bindConsumerLagMetrics(kafka, env, consumers);
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
        .end(JSON.stringify({
          status: ok ? 'ok' : 'degraded', db, consumers: running.length,
          jobs: scheduler.list().map((j) => ({ name: j.job.name, nextRun: j.nextRun() })),
          // what runs at this instant: lets an operator (and the metrics test) see the worker idle after pausing its jobs
          activity: { ...scheduler.activity(), consumerBatchesInFlight: running.reduce((n, c) => n + c.batchesInFlight(), 0) },
        }));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(env.WORKER_METRICS_PORT, '127.0.0.1', resolve));
  const prune: { timer?: NodeJS.Timeout } = {};
  let stopping = false;
  shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    healthy = false;
    logger.info({ signal, deadlineMs: env.SHUTDOWN_TIMEOUT_MS }, 'worker stopping');
    clearInterval(prune.timer);
    // SHUTDOWN_TIMEOUT_MS bounds it: past it the worker exits with what it holds (an open transaction rolls
    // back, an uncommitted offset is redelivered to another member and dropped by its inbox)
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => { timer = setTimeout(() => resolve('deadline'), env.SHUTDOWN_TIMEOUT_MS); });
    const outcome = await Promise.race([
      (async () => {
        await scheduler.stop();
        await Promise.allSettled(running.map((c) => c.stop()));
        server.close();
        await database.close();
        await tracing.shutdown(); // flushes the spans of the last cycles
        return 'done' as const;
      })(),
      deadline,
    ]);
    clearTimeout(timer);
    if (outcome === 'deadline') logger.warn({ deadlineMs: env.SHUTDOWN_TIMEOUT_MS }, 'worker shutdown deadline passed: exiting with the work in hand');
    else logger.info('worker stopped');
    // exit once the last lines are written (pino's destination is asynchronous), at the latest after 500 ms
    const exit = () => process.exit(outcome === 'done' ? 0 : 1);
    setTimeout(exit, 500).unref();
    logger.flush(() => exit());
  };
  if (pendingSignal) void shutdown(pendingSignal);

  logger.info({ port: env.WORKER_METRICS_PORT }, 'worker metrics and health listening');

  // NOTIFY from a writing transaction wakes the relay; the cron tick covers a lost notification. A
  // wake-up is a tick: a relay paused from the ops page stays paused.
  // A wake-up during a cycle runs one more cycle after it (JobScheduler.wake), so none is lost.
  const relay = scheduler.get('outbox-relay')!;
  const wake = () => { void relay.wake(); };
  for (const name of OUTBOX_NAMES) await database.sql.listen(outboxChannel(name), wake);

  // Jobs first: joining a consumer group waits until Kafka has dropped the members of a crashed worker
  // (up to the session timeout, 30 s); a restarted worker must not leave the safety net and the relay
  // idle for that long (found by the kill -9 fault scenario, test/faults).
  if (stopping) return;
  scheduler.start();
  wake();
  for (const def of consumers) {
    if (def.topics.length === 0) continue;
    const consumer = await startConsumer(def, { database, env, logger, kafka });
    // stopped meanwhile: the shutdown did not see this one
    if (stopping) { await consumer.stop(); return; }
    running.push(consumer);
    logger.info({ consumer: def.name }, 'consumer started');
  }
  prune.timer = setInterval(() => void pruneJobRuns(database.db, env.JOB_RUNS_RETENTION_MS).catch(() => {}), 3600_000);
  logger.info({ jobs: scheduler.list().map((j) => ({ name: j.job.name, nextRun: j.nextRun() })) }, 'worker started');

}

main().catch((e) => {
  console.error(`worker failed to start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
