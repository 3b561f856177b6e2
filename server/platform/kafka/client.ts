import { Kafka, logLevel, type Producer } from 'kafkajs';
import type { PlatformEnv } from '../env';
import type { Logger } from '../logger';

/**
 * Warnings kafkajs prints for every producer of our configuration, not for a problem: the partitioner notice
 * (we never relied on the old default) and the idempotent producer's retry limit (our `retry` is kafkajs's own
 * client retry; the producer stays idempotent). At debug, so a warning in the log means something.
 */
export const EXPECTED_WARNINGS = ['KafkaJS v2.0.0 switched default partitioner', 'Limiting retries for the idempotent producer'];

/** kafkajs log lines go through pino (warn and above) instead of kafkajs's own console logger. */
export function createKafka(env: Pick<PlatformEnv, 'KAFKA_BROKERS' | 'KAFKA_CLIENT_ID'>, logger?: Logger, clientSuffix = ''): Kafka {
  return new Kafka({
    clientId: `${env.KAFKA_CLIENT_ID}${clientSuffix}`,
    brokers: env.KAFKA_BROKERS.split(','),
    connectionTimeout: 5_000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 300, retries: 8, maxRetryTime: 10_000 },
    logLevel: logLevel.WARN,
    logCreator: () => ({ level, log }) => {
      if (!logger) return;
      const { message, ...extra } = log as { message: string } & Record<string, unknown>;
      const line = { kafkajs: true, broker: extra.broker, error: extra.error };
      if (level <= logLevel.ERROR) logger.error(line, message);
      else if (EXPECTED_WARNINGS.some((w) => message.startsWith(w))) logger.debug(line, message);
      else logger.warn(line, message);
    },
  });
}

/**
 * The idempotent producer (acks=all, one in-flight request): per-partition order survives retries.
 * Never call send concurrently on it — callers serialise (the relay sends one batch at a time).
 */
export function createIdempotentProducer(kafka: Kafka): Producer {
  return kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
}

export const toHeaders = (h: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(h).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, String(v)]));
