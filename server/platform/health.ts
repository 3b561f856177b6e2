import { createKafka } from './kafka/client';
import type { Database } from './db';
import type { PlatformEnv } from './env';

export interface Health {
  status: 'ok' | 'degraded';
  db: { ok: boolean; error?: string; latencyMs?: number };
  kafka: { ok: boolean; error?: string; brokers?: number };
}

/** Is PostgreSQL answering, and does the Kafka cluster answer a metadata request? */
export async function checkHealth({ database, env }: { database: Database; env: PlatformEnv }): Promise<Health> {
  const db: Health['db'] = { ok: false };
  const t0 = Date.now();
  try {
    await database.sql`SELECT 1`;
    db.ok = true;
    db.latencyMs = Date.now() - t0;
  } catch (e) {
    db.error = (e as Error).message;
  }
  const kafka: Health['kafka'] = { ok: false };
  const admin = createKafka(env, undefined, '-health').admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    kafka.ok = cluster.brokers.length > 0;
    kafka.brokers = cluster.brokers.length;
  } catch (e) {
    kafka.error = (e as Error).message;
  } finally {
    await admin.disconnect().catch(() => {});
  }
  return { status: db.ok && kafka.ok ? 'ok' : 'degraded', db, kafka };
}
