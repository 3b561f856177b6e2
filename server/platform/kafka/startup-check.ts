import { Kafka, logLevel } from 'kafkajs';
import type { PlatformEnv } from '../env';
import { findMissingTopics, missingTopicsLine } from './topics';

/**
 * Start-up check of web and worker: every topic and DLQ of the system must exist on the broker
 * (topics are never auto-created: `auto.create.topics.enable=false`, producers ask for none). Returns
 * null when they do, else the one line to print before exiting (it names the missing topics and
 * `npm run kafka:topics`). Connection errors are thrown (the caller's own start-up error handling).
 */
export async function checkTopicsAtStart(env: Pick<PlatformEnv, 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID' | 'KAFKA_TOPIC_PREFIX'>): Promise<string | null> {
  const kafka = new Kafka({
    clientId: `${env.KAFKA_CLIENT_ID}-startup-check`,
    brokers: env.KAFKA_BROKERS.split(','),
    connectionTimeout: 5_000,
    retry: { retries: 3 },
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const missing = await findMissingTopics(admin, env.KAFKA_TOPIC_PREFIX);
    return missing.length === 0 ? null : missingTopicsLine(missing);
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/** For process entry points: prints the line and exits 1 when a topic is missing. */
export async function exitUnlessTopicsExist(env: Pick<PlatformEnv, 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID' | 'KAFKA_TOPIC_PREFIX'>): Promise<void> {
  const line = await checkTopicsAtStart(env);
  if (line === null) return;
  process.stderr.write(`${line}\n`, () => process.exit(1));
  // never resolves: the process ends as soon as the line is written
  await new Promise<never>(() => {});
}
