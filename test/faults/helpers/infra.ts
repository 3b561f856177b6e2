import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTopics, DATA_DIR, ensureDatabase } from '../../../scripts/infra';
import { startLocalKafka, type LocalKafka } from '../../../scripts/infra/kafka';
import { startLocalKafkaCluster, type LocalKafkaCluster } from '../../../scripts/infra/kafka-cluster';
import { startLocalPostgres, type LocalPostgres } from '../../../scripts/infra/postgres';
import { runMigrations } from '../../../server/platform/migrate';

/**
 * A PostgreSQL / Kafka of the fault test's own, for the scenarios that stop, kill or restart them:
 * the shared instances of the global setup are never disturbed. Data lives under
 * `.data/faults-<name>-<kind>-<pid>` (fresh at start, removed at close); a restart keeps the data
 * and the port, so clients reconnect to the same address.
 */

const log = (line: string) => {
  if (process.env.FAULTS_VERBOSE) console.log(`[faults-infra] ${line}`);
};

const dirFor = (name: string, kind: string) => path.join(DATA_DIR, `faults-${name}-${kind}-${process.pid}`);

export interface OwnPostgres {
  /** admin URL (database "postgres") */
  adminUrl: string;
  port: number;
  /** a migrated database on this server; returns its URL */
  createDatabase(name?: string): Promise<string>;
  /** fast shutdown (backends terminated, transactions rolled back) */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startOwnPostgres(name: string): Promise<OwnPostgres> {
  const dataDir = dirFor(name, 'pg');
  let pg: LocalPostgres | null = await startLocalPostgres({ dataDir, fresh: true, log });
  const port = pg.port;
  const adminUrl = pg.url;
  return {
    adminUrl,
    port,
    async createDatabase(db = `pin_f_${randomBytes(4).toString('hex')}`) {
      const url = await ensureDatabase(adminUrl, db);
      await runMigrations(url);
      return url;
    },
    async stop() {
      await pg?.stop();
      pg = null;
    },
    async start() {
      if (pg) return;
      pg = await startLocalPostgres({ dataDir, port, fresh: false, log });
    },
    async close() {
      await pg?.stop();
      pg = null;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface OwnKafka {
  brokers: string;
  port: number;
  /** creates every topic of the system under `prefix` */
  createTopics(prefix: string): Promise<void>;
  /** controlled shutdown of the broker */
  stop(): Promise<void>;
  /** starts it again on the same port with the same log dirs (topics and offsets survive) */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startOwnKafka(name: string): Promise<OwnKafka> {
  const dataDir = dirFor(name, 'kafka');
  let kafka: LocalKafka | null = await startLocalKafka({ dataDir, fresh: true, log });
  const brokers = kafka.brokers;
  const port = Number(brokers.split(':')[1]);
  return {
    brokers,
    port,
    createTopics: (prefix) => createTopics(brokers, prefix),
    async stop() {
      await kafka?.stop();
      kafka = null;
    },
    async start() {
      if (kafka) return;
      // the port was just released by the broker; a socket in TIME_WAIT can delay its reuse briefly
      for (let attempt = 0; ; attempt++) {
        try {
          kafka = await startLocalKafka({ dataDir, port, fresh: false, log });
          return;
        } catch (e) {
          if (attempt >= 20 || !/not free/.test((e as Error).message)) throw e;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    },
    async close() {
      await kafka?.stop();
      kafka = null;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const randomPrefix = (tag: string) => `f${tag}${randomBytes(3).toString('hex')}.`;

/**
 * A local 3-node Kafka cluster of the scenario's own (scripts/infra/kafka-cluster.ts): RF 3,
 * min.insync.replicas 2 for every topic; its nodes can be killed and restarted one at a time.
 */
export async function startOwnKafkaCluster(name: string, size = 3): Promise<LocalKafkaCluster & { close(): Promise<void> }> {
  const dataDir = dirFor(name, 'kafka-cluster');
  const cluster = await startLocalKafkaCluster({ dataDir, size, fresh: true, log });
  return Object.assign(cluster, {
    async close() {
      await cluster.stop(5_000);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  });
}
