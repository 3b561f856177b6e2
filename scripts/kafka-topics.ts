import { Kafka, logLevel } from 'kafkajs';
import { EnvError, platformEnvSchema, parseEnvWith } from '../server/platform/env';
import { formatTopicAction, reconcileTopics } from '../server/platform/kafka/topics';

/**
 * `npm run kafka:topics`: creates or verifies every topic and DLQ of the system with the partitions,
 * replication factor and min.insync.replicas of the configuration (KAFKA_TOPIC_PARTITIONS,
 * KAFKA_REPLICATION_FACTOR, KAFKA_MIN_INSYNC_REPLICAS; KAFKA_BROKERS, KAFKA_TOPIC_PREFIX). Prints one
 * line per topic and a summary; exit 0 when every topic is as configured, 1 on a problem it cannot
 * fix (a different replication factor, a topic the cluster refused to create), 1 on bad configuration.
 * Idempotent: run it before the first deployment and after every change of these settings.
 */
const schema = platformEnvSchema.pick({
  KAFKA_BROKERS: true,
  KAFKA_TOPIC_PREFIX: true,
  KAFKA_CLIENT_ID: true,
  KAFKA_TOPIC_PARTITIONS: true,
  KAFKA_REPLICATION_FACTOR: true,
  KAFKA_MIN_INSYNC_REPLICAS: true,
});

async function main(): Promise<number> {
  let env;
  try {
    env = parseEnvWith(schema, process.env);
  } catch (e) {
    if (e instanceof EnvError) { console.error(e.message); return 1; }
    throw e;
  }
  if (env.KAFKA_MIN_INSYNC_REPLICAS > env.KAFKA_REPLICATION_FACTOR) {
    console.error(`invalid configuration: KAFKA_MIN_INSYNC_REPLICAS (${env.KAFKA_MIN_INSYNC_REPLICAS}) cannot exceed KAFKA_REPLICATION_FACTOR (${env.KAFKA_REPLICATION_FACTOR})`);
    return 1;
  }
  const settings = {
    prefix: env.KAFKA_TOPIC_PREFIX,
    partitions: env.KAFKA_TOPIC_PARTITIONS,
    replicationFactor: env.KAFKA_REPLICATION_FACTOR,
    minInsyncReplicas: env.KAFKA_MIN_INSYNC_REPLICAS,
  };
  console.log(
    `kafka:topics on ${env.KAFKA_BROKERS}, prefix "${settings.prefix}": ${settings.partitions} partitions, ` +
      `replication factor ${settings.replicationFactor}, min.insync.replicas ${settings.minInsyncReplicas}`,
  );
  const kafka = new Kafka({ clientId: `${env.KAFKA_CLIENT_ID}-topics`, brokers: env.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING, connectionTimeout: 5_000 });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const report = await reconcileTopics(admin, settings);
    for (const action of report.actions) console.log(formatTopicAction(action));
    console.log(
      `${report.actions.length === 0 ? 0 : new Set(report.actions.map((a) => a.topic)).size} topics: ${report.created} created, ` +
        `${report.changed} changed, ${report.unchanged} unchanged, ${report.problems} with problems`,
    );
    return report.problems > 0 ? 1 : 0;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`kafka:topics failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
