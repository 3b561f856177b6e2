import { sql } from 'drizzle-orm';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage, Producer } from 'kafkajs';
import { anyEnvelopeSchema, contracts, type AnyEnvelope, type Topic } from '../../contracts';
import type { Database, Tx } from '../db';
import type { PlatformEnv } from '../env';
import type { Logger } from '../logger';
import { counter, gauge, registeredLabel } from '../metrics';
import { createIdempotentProducer, toHeaders } from './client';
import { dlqTopic, REQUEUE_FOR_HEADER, withPrefix } from './topics';
import { contextFromHeaders, markSpanFailed, SpanKind, withSpan } from '../tracing';

const messagesTotal = counter('pin_consumer_messages_total', 'Consumed messages by consumer and outcome', ['consumer', 'result'], {
  consumer: registeredLabel('consumer'),
  result: ['applied', 'no-op', 'duplicate', 'rejected', 'dlq'],
});
const processingDelay = gauge('pin_consumer_processing_delay_seconds', 'Age of the last message when the consumer applied it (broker timestamp to commit)', ['consumer']);
const retriesTotal = counter('pin_consumer_transient_errors_total', 'Transient failures retried by consumer', ['consumer'], { consumer: registeredLabel('consumer') });

export const MAX_PAYLOAD_BYTES = 256 * 1024;
/**
 * Applied offsets are committed at most this often (one OffsetCommit in flight per consumer, carrying the
 * latest applied offset of every partition that moved since the previous one). A crash redelivers at most
 * this much applied work, which the inbox drops.
 */
export const OFFSET_COMMIT_INTERVAL_MS = 1_000;
/** Partitions of a consumer group applied at the same time by one consumer (topics have 3 partitions). */
export const PARTITIONS_CONSUMED_CONCURRENTLY = 3;

export interface ConsumedMessage<T = unknown> {
  topic: Topic;
  envelope: AnyEnvelope & { payload: T };
  partition: number;
  offset: string;
}

export type HandlerOutcome = { result: 'applied' | 'no-op'; detail?: string };

/**
 * A message that can never succeed (contract violation, business rejection such as
 * CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH): it goes to `<group>.dlq` and the consumer moves on.
 * `record` runs in the transaction that marks the message rejected in the inbox (e.g. a row for ops).
 */
export class RejectMessage extends Error {
  constructor(public readonly code: string, message: string, public readonly record?: (tx: Tx) => Promise<void>) {
    super(message);
    this.name = 'RejectMessage';
  }
}

export interface ConsumerDefinition {
  /** consumer group id (prefixed by KAFKA_TOPIC_PREFIX) and inbox `consumer` value */
  name: string;
  /** the schema of the consumer's inbox table (`<inbox>.inbox`): its own context's */
  inbox: string;
  topics: Topic[];
  handle(tx: Tx, message: ConsumedMessage, ctx: { logger: Logger; env: PlatformEnv }): Promise<HandlerOutcome>;
}

type PartitionOffset = { topic: string; partition: number; offset: string };

/**
 * Commits applied offsets off the fetch path. kafkajs fetches again only once every batch of the previous
 * fetch has returned from eachBatch, so an OffsetCommit awaited at the end of each batch put a broker round
 * trip between one fetch and the next: every message that arrived meanwhile waited for it, and at the
 * saga's load each consumed message cost one commit (7 per booking command across the worker's consumers).
 * Here a batch only records its last applied offset; one commit at a time goes out, at most every
 * `intervalMs`, with the newest offset of every partition recorded since the previous one (offsets of a
 * partition only grow: its batches run one after another). `flush` sends what is recorded now (stop).
 * A failed commit (a rebalance took the partition) is logged and dropped: the next owner redelivers from
 * the last committed offset and its inbox drops what was applied here.
 */
export function offsetCommitter(commit: (offsets: PartitionOffset[]) => Promise<void>, intervalMs: number, onError: (e: unknown) => void) {
  const recorded = new Map<string, PartitionOffset>();
  let loop: Promise<void> | null = null;
  let lastCommitAt = 0;
  let wakeEarly: (() => void) | null = null;
  let flushing = false;
  const run = async () => {
    while (recorded.size > 0) {
      const wait = lastCommitAt + intervalMs - Date.now();
      if (wait > 0 && !flushing) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          wakeEarly = () => { clearTimeout(timer); resolve(); };
        });
        wakeEarly = null;
      }
      const offsets = [...recorded.values()];
      recorded.clear();
      lastCommitAt = Date.now();
      try {
        await commit(offsets);
      } catch (e) {
        onError(e);
      }
    }
  };
  const start = () => {
    loop ??= run().finally(() => { loop = null; if (recorded.size > 0) start(); });
    return loop;
  };
  return {
    /** `offset` of `topic`/`partition` was applied (its database transaction committed) */
    applied(topic: string, partition: number, offset: string): void {
      recorded.set(`${topic}:${partition}`, { topic, partition, offset: (BigInt(offset) + 1n).toString() });
      void start();
    },
    /** commits what has been recorded, without waiting for the interval */
    async flush(): Promise<void> {
      flushing = true;
      try {
        wakeEarly?.();
        while (loop || recorded.size > 0) await start();
      } finally {
        flushing = false;
      }
    },
  };
}

export interface RunningConsumer {
  consumer: Consumer;
  /** fetched batches being applied right now (from the first message to the last; offsets are committed apart, offsetCommitter) */
  batchesInFlight(): number;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One message applied exactly once: its inbox row and the handler in ONE transaction (a messageId
 * seen before is a 'duplicate' and the handler does not run); a result other than 'applied', or a
 * detail, is stored on the inbox row. A RejectMessage (or any failure) leaves the transaction rolled
 * back and is the caller's — the runner below, or a replay without Kafka (replay.ts).
 */
export async function applyInInbox(
  database: Database, def: ConsumerDefinition, message: ConsumedMessage, ctx: { logger: Logger; env: PlatformEnv },
): Promise<HandlerOutcome | { result: 'duplicate' }> {
  return database.db.transaction(async (tx) => {
    const inserted = await tx.execute(sql`INSERT INTO ${sql.identifier(def.inbox)}.inbox (consumer, message_id, topic, result)
      VALUES (${def.name}, ${message.envelope.messageId}, ${message.topic}, 'applied') ON CONFLICT DO NOTHING RETURNING message_id`);
    if (inserted.length === 0) return { result: 'duplicate' as const };
    const res = await def.handle(tx, message, ctx);
    if (res.result !== 'applied' || res.detail) {
      await tx.execute(sql`UPDATE ${sql.identifier(def.inbox)}.inbox SET result = ${res.result}, detail = ${res.detail ?? null}
        WHERE consumer = ${def.name} AND message_id = ${message.envelope.messageId}`);
    }
    return res;
  });
}

/** A rejected message's inbox row ('rejected', the code as detail) and the rejection's own record (RejectMessage.record), in one transaction. */
export async function recordRejection(
  database: Database, def: ConsumerDefinition, messageId: string | undefined, topic: Topic, code: string, record?: (tx: Tx) => Promise<void>,
): Promise<void> {
  if (!messageId && !record) return;
  await database.db.transaction(async (tx) => {
    if (messageId) {
      await tx.execute(sql`INSERT INTO ${sql.identifier(def.inbox)}.inbox (consumer, message_id, topic, result, detail)
        VALUES (${def.name}, ${messageId}, ${topic}, 'rejected', ${code}) ON CONFLICT DO NOTHING`);
    }
    await record?.(tx);
  });
}

/**
 * Runs one consumer group: each message is applied and its messageId recorded in the context's inbox
 * in ONE transaction; the offset is committed only after that commit. A duplicate messageId is a
 * no-op. Transient failures (database down, deadlock) are retried with backoff in place — the
 * partition waits, nothing goes to the DLQ. If the DLQ cannot be written, the offset is not committed.
 */
export async function startConsumer(
  def: ConsumerDefinition,
  deps: { database: Database; env: PlatformEnv; logger: Logger; kafka: Kafka; fromBeginning?: boolean },
): Promise<RunningConsumer> {
  const { env } = deps;
  const group = withPrefix(env.KAFKA_TOPIC_PREFIX, def.name);
  const log = deps.logger.child({ consumer: def.name });
  const consumer = deps.kafka.consumer({ groupId: group, sessionTimeout: 30_000, heartbeatInterval: 3_000, allowAutoTopicCreation: false });
  const dlqProducer: Producer = createIdempotentProducer(deps.kafka);
  const unprefix = new Map(def.topics.map((t) => [withPrefix(env.KAFKA_TOPIC_PREFIX, t), t] as const));
  let stopping = false;
  let batchesInFlight = 0;

  // a rebalance (a worker added, removed or dead) is visible in the log: when it ended, who got what
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const partitions = Object.values(payload.memberAssignment).reduce((n, ps) => n + ps.length, 0);
    log.info({ event: 'consumer.group_joined', group, memberId: payload.memberId, partitions, isLeader: payload.isLeader, durationMs: payload.duration }, 'consumer joined its group');
  });
  await Promise.all([consumer.connect(), dlqProducer.connect()]);
  await consumer.subscribe({ topics: [...unprefix.keys()], fromBeginning: deps.fromBeginning ?? true });

  // partitions run concurrently, but the idempotent producer must not send concurrently (client.ts): one DLQ send at a time
  let dlqQueue: Promise<unknown> = Promise.resolve();
  const sendToDlq = (topic: string, partition: number, message: KafkaMessage, code: string, reason: string): Promise<void> => {
    const sent = dlqQueue.then(() => sendToDlqNow(topic, partition, message, code, reason));
    dlqQueue = sent.catch(() => {});
    return sent;
  };
  const sendToDlqNow = async (topic: string, partition: number, message: KafkaMessage, code: string, reason: string) => {
    const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, v?.toString() ?? '']));
    await dlqProducer.send({
      topic: withPrefix(env.KAFKA_TOPIC_PREFIX, dlqTopic(def.name)),
      acks: -1,
      messages: [{
        key: message.key,
        value: message.value,
        headers: toHeaders({
          ...headers,
          'dlq.error.code': code,
          'dlq.error.message': reason.slice(0, 1000),
          'dlq.original.topic': topic,
          'dlq.original.partition': partition,
          'dlq.original.offset': message.offset,
          'dlq.consumer': def.name,
          'dlq.failed_at': new Date().toISOString(),
        }),
      }],
    });
  };

  const parse = (topic: Topic, message: KafkaMessage): { envelope: AnyEnvelope } | { code: string; reason: string; messageId?: string } => {
    const raw = message.value;
    if (!raw) return { code: 'CONTRACT_EMPTY_MESSAGE', reason: 'message has no value' };
    if (raw.length > MAX_PAYLOAD_BYTES) return { code: 'CONTRACT_PAYLOAD_TOO_LARGE', reason: `${raw.length} bytes > ${MAX_PAYLOAD_BYTES}` };
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch (e) {
      return { code: 'CONTRACT_INVALID_JSON', reason: (e as Error).message };
    }
    const head = anyEnvelopeSchema.safeParse(json);
    if (!head.success) return { code: 'CONTRACT_VIOLATION', reason: head.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
    if (head.data.contractVersion !== 1) {
      return { code: 'CONTRACT_VERSION_UNSUPPORTED', reason: `contractVersion ${head.data.contractVersion}`, messageId: head.data.messageId };
    }
    const full = contracts[topic].safeParse(json);
    if (!full.success) {
      return { code: 'CONTRACT_VIOLATION', reason: full.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), messageId: head.data.messageId };
    }
    return { envelope: full.data as AnyEnvelope };
  };


  // One message, applied (or sent to the DLQ) — its offset is committed by the batch loop below.
  // One CONSUMER span per message, child of the span that wrote the outbox row (its traceparent
  // travels in the Kafka headers); the handler's own outbox rows carry this span on (tracing.ts).
  const processMessage = (fullTopic: string, partition: number, message: KafkaMessage, heartbeat: () => Promise<void>) =>
    withSpan(`${unprefix.get(fullTopic)} process`, {
      kind: SpanKind.CONSUMER,
      parent: contextFromHeaders(message.headers),
      attributes: {
        'messaging.system': 'kafka', 'messaging.operation.type': 'process', 'messaging.destination.name': fullTopic,
        'messaging.consumer.group.name': group, 'messaging.destination.partition.id': String(partition), 'messaging.kafka.offset': Number(message.offset),
      },
    }, async (span) => {
      const topic = unprefix.get(fullTopic)!;
      const requeuedFor = message.headers?.[REQUEUE_FOR_HEADER]?.toString();
      if (requeuedFor !== undefined && requeuedFor !== def.name) {
        messagesTotal.inc({ consumer: def.name, result: 'no-op' });
        span.setAttribute('pin.consumer.result', 'no-op');
        return;
      }
      const parsed = parse(topic, message);
      if (!('envelope' in parsed)) {
        await sendToDlq(fullTopic, partition, message, parsed.code, parsed.reason);
        await recordRejection(deps.database, def, parsed.messageId, topic, parsed.code);
        messagesTotal.inc({ consumer: def.name, result: 'dlq' });
        span.setAttribute('pin.consumer.result', 'dlq');
        markSpanFailed(span, parsed.code);
        log.warn({ topic, partition, offset: message.offset, code: parsed.code, messageId: parsed.messageId }, 'consumer message sent to DLQ');
        return;
      }
      const { envelope } = parsed;
      span.setAttributes({
        'messaging.message.id': envelope.messageId, 'pin.correlation_id': envelope.correlationId,
        ...(envelope.causationId ? { 'pin.causation_id': envelope.causationId } : {}), 'pin.tenant_id': envelope.tenantId, 'pin.aggregate_id': envelope.aggregateId,
      });
      const mlog = log.child({ topic, messageId: envelope.messageId, correlationId: envelope.correlationId, causationId: envelope.causationId, aggregateId: envelope.aggregateId });
      for (let attempt = 0; ; attempt++) {
        try {
          const outcome = await applyInInbox(deps.database, def, { topic, envelope, partition, offset: message.offset }, { logger: mlog, env });
          messagesTotal.inc({ consumer: def.name, result: outcome.result });
          span.setAttribute('pin.consumer.result', outcome.result);
          if (outcome.result === 'applied') mlog.debug({ result: 'applied' }, 'consumer applied');
          else mlog.debug({ result: outcome.result, detail: 'detail' in outcome ? outcome.detail : undefined }, 'consumer no-op');
          break;
        } catch (e) {
          if (e instanceof RejectMessage) {
            await sendToDlq(fullTopic, partition, message, e.code, e.message);
            await recordRejection(deps.database, def, envelope.messageId, topic, e.code, e.record);
            messagesTotal.inc({ consumer: def.name, result: 'rejected' });
            span.setAttributes({ 'pin.consumer.result': 'rejected', 'pin.reject.code': e.code });
            markSpanFailed(span, e.code);
            mlog.warn({ code: e.code, reason: e.message }, 'consumer rejected message to DLQ');
            break;
          }
          retriesTotal.inc({ consumer: def.name });
          span.recordException(e instanceof Error ? e : String(e));
          if (stopping) throw e; // leave the offset uncommitted; the next owner retries
          const delay = Math.min(30_000, 200 * 2 ** Math.min(attempt, 8));
          mlog.error({ attempt, delayMs: delay, err: { message: (e as Error).message } }, 'consumer transient failure, retrying');
          await sleep(delay);
          await heartbeat().catch(() => {});
        }
      }
      processingDelay.set({ consumer: def.name }, Math.max(0, (Date.now() - Number(message.timestamp)) / 1000));
    });

  const committer = offsetCommitter((offsets) => consumer.commitOffsets(offsets), OFFSET_COMMIT_INTERVAL_MS,
    (e) => log.warn({ err: { message: (e as Error).message } }, 'consumer offset commit failed; the next owner redelivers and its inbox drops the duplicates'));

  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    // Partitions are applied concurrently (order within a partition, i.e. per key, is kept; across
    // topics there was never an order — DESIGN decision 3). One message at a time made the consumer
    // latency-bound: ~15 sequential round trips per message capped it below 100 messages/s on the
    // bench machine and the saga's hop to the chessboard queued up for seconds (`npm run bench -- saga-latency`).
    partitionsConsumedConcurrently: PARTITIONS_CONSUMED_CONCURRENTLY,
    // Messages one by one in partition order; their offsets are committed by `committer`, after their
    // database commit, at most every OFFSET_COMMIT_INTERVAL_MS and never on the way to the next fetch.
    // A crash before the commit redelivers the applied messages; the inbox drops them (at-least-once).
    eachBatch: async (payload) => {
      batchesInFlight += 1;
      try {
        await applyBatch(payload);
      } finally {
        batchesInFlight -= 1;
      }
    },
  });

  async function applyBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic: fullTopic, partition } = batch;
    for (const message of batch.messages) {
      if (!isRunning() || isStale()) break;
      await processMessage(fullTopic, partition, message, heartbeat);
      resolveOffset(message.offset);
      // committed by the committer (off this path); what was applied before a failure below is committed too
      committer.applied(fullTopic, partition, message.offset);
      await heartbeat();
    }
  }

  return {
    consumer,
    batchesInFlight: () => batchesInFlight,
    stop: async () => {
      stopping = true;
      // what is applied so far is committed while the consumer is still a member (kafkajs drops commits once
      // stopping); a message applied after this is redelivered to the next owner, whose inbox drops it
      await committer.flush();
      await consumer.disconnect(); // waits for the message in hand
      await dlqProducer.disconnect().catch(() => {});
    },
  };
}
