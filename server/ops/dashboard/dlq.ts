import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { KafkaMessage } from 'kafkajs';
import type { Actor } from '../../auth/actor';
import type { Db, DbOrTx } from '../../platform/db';
import type { PlatformEnv } from '../../platform/env';
import { AppError, isAppError } from '../../platform/errors';
import { createIdempotentProducer } from '../../platform/kafka/client';
import { dlqTopic, REQUEUE_FOR_HEADER, withPrefix } from '../../platform/kafka/topics';
import type { Logger } from '../../platform/logger';
import { forgetRejectedMessage as forgetCatalogRejection } from '../../catalog/inbox-replay';
import { resolveHoldMismatch } from '../../chessboard/commands';
import { forgetRejectedMessage as forgetChessboardRejection } from '../../chessboard/inbox-replay';
import { forgetRejectedMessage as forgetCrmRejection } from '../../crm/inbox-replay';
import { forgetRejectedMessage as forgetMessengerRejection } from '../../messenger/inbox-replay';
import { forgetRejectedMessage as forgetNotificationsRejection } from '../../notifications/inbox-replay';
import { forgetRejectedMessage as forgetRewardsRejection } from '../../rewards/inbox-replay';
import type { ConsumerDefinition } from '../../platform/kafka/consumer-runner';
import { recordAudit } from '../../platform/audit';
import { dlqMessages } from '../schema';
import { consumerGroups, dlqTopicOffsets, opsKafka, type PartitionOffsets } from './kafka-admin';
import type { TenantScope } from './sql';

/**
 * The dead-letter queues (`<group>.dlq`, one per consumer group). The dashboard reads them into
 * ops.dlq_messages — from the last cached offset to the end offset, with a throwaway consumer group that
 * never commits — so listing, deciding and counting are plain SQL and survive Kafka's retention.
 * A decision (requeue / discard) hides the record. A requeue goes to the rejecting group only; if the
 * message fails there again, its new DLQ record takes the old one's place in the list (one row, its
 * attempts counted) — the DLQ has no automatic retry, the next attempt is always an operator's requeue.
 */

export const DLQ_ERRORS = {
  NOT_FOUND: 'OPS_DLQ_MESSAGE_NOT_FOUND',
  ALREADY_DECIDED: 'OPS_DLQ_MESSAGE_ALREADY_DECIDED',
  NO_ORIGINAL_TOPIC: 'OPS_DLQ_NO_ORIGINAL_TOPIC',
} as const;

const headerText = (v: Buffer | string | (Buffer | string)[] | undefined): string | undefined =>
  v === undefined ? undefined : Array.isArray(v) ? headerText(v[0]) : v.toString();

/** A DLQ record as stored: the dlq.* headers say why and where from; the rest is the message itself. */
export function toDlqRow(group: string, topic: string, partition: number, message: Pick<KafkaMessage, 'key' | 'value' | 'headers' | 'offset'>) {
  const headers: Record<string, string> = {};
  const dlq: Record<string, string> = {};
  for (const [k, v] of Object.entries(message.headers ?? {})) {
    const text = headerText(v);
    if (text === undefined) continue;
    if (k.startsWith('dlq.')) dlq[k] = text;
    else headers[k] = text;
  }
  const value = message.value ? message.value.toString('utf8') : null;
  let envelope: { messageId?: unknown; aggregateId?: unknown; tenantId?: unknown } = {};
  try {
    envelope = value ? JSON.parse(value) : {};
  } catch {
    // an unparseable message (CONTRACT_INVALID_JSON) has no envelope: it is still listed
  }
  const uuid = (v: unknown) => (typeof v === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v) ? v : null);
  const failedAt = dlq['dlq.failed_at'] ? new Date(dlq['dlq.failed_at']) : null;
  return {
    topic,
    partition,
    offset: Number(message.offset),
    consumerGroup: dlq['dlq.consumer'] ?? group,
    errorCode: dlq['dlq.error.code'] ?? null,
    errorMessage: dlq['dlq.error.message'] ?? null,
    originalTopic: dlq['dlq.original.topic'] ?? null,
    originalPartition: dlq['dlq.original.partition'] !== undefined ? Number(dlq['dlq.original.partition']) : null,
    originalOffset: dlq['dlq.original.offset'] ?? null,
    key: message.key ? message.key.toString('utf8') : null,
    value,
    headers,
    messageId: uuid(envelope.messageId),
    aggregateId: typeof envelope.aggregateId === 'string' ? envelope.aggregateId : null,
    tenantId: uuid(envelope.tenantId),
    failedAt: failedAt && !Number.isNaN(failedAt.getTime()) ? failedAt : null,
  };
}

/** The record a requeued copy came from (`ops.requeued-from`, set by requeue): this record is its next attempt. */
async function withAttempts<R extends ReturnType<typeof toDlqRow>>(db: DbOrTx, row: R): Promise<R & { attempts: number; firstFailedAt: Date | null; retryOf: string | null }> {
  const from = row.headers['ops.requeued-from'];
  const m = from ? /^(.+)\/(\d+)\/(\d+)$/.exec(from) : null;
  if (!m) return { ...row, attempts: 1, firstFailedAt: row.failedAt, retryOf: null };
  const [prior] = await db.select({ attempts: dlqMessages.attempts, firstFailedAt: dlqMessages.firstFailedAt, failedAt: dlqMessages.failedAt, consumerGroup: dlqMessages.consumerGroup })
    .from(dlqMessages)
    .where(and(eq(dlqMessages.topic, m[1]!), eq(dlqMessages.partition, Number(m[2])), eq(dlqMessages.offset, Number(m[3]))));
  if (!prior || prior.consumerGroup !== row.consumerGroup) return { ...row, attempts: 1, firstFailedAt: row.failedAt, retryOf: null };
  return { ...row, attempts: prior.attempts + 1, firstFailedAt: prior.firstFailedAt ?? prior.failedAt ?? row.failedAt, retryOf: from! };
}

export interface DlqSyncResult {
  read: number;
  topics: number;
  /** true when the reader stopped at its time limit before the end offsets */
  partial: boolean;
}

/**
 * Reads the DLQ records not cached yet: for each partition from max(low watermark, last cached + 1)
 * up to the end offset seen at the start. Nothing new → no consumer is started at all.
 */
export async function syncDlqMessages(db: Db, env: PlatformEnv, logger?: Logger, opts: { timeoutMs?: number } = {}): Promise<DlqSyncResult> {
  const offsets = await dlqTopicOffsets(env);
  const cached = await db.execute<{ topic: string; partition: number; max: string }>(sql`
    SELECT topic, partition, max("offset")::text AS max FROM ${dlqMessages} GROUP BY topic, partition`);
  const lastCached = new Map(cached.map((r) => [`${r.topic}:${r.partition}`, Number(r.max)]));
  const work: { group: string; topic: string; partition: number; start: number; end: number }[] = [];
  for (const t of offsets) {
    for (const p of t.partitions) {
      const start = Math.max(p.low, (lastCached.get(`${t.topic}:${p.partition}`) ?? -1) + 1);
      if (start < p.high) work.push({ group: t.group, topic: t.topic, partition: p.partition, start, end: p.high });
    }
  }
  if (work.length === 0) return { read: 0, topics: 0, partial: false };

  const kafka = opsKafka(env, logger);
  const consumer = kafka.consumer({
    // throwaway group: never commits, so it leaves nothing behind once it disconnects
    groupId: withPrefix(env.KAFKA_TOPIC_PREFIX, `ops.dlq-reader.${randomUUID()}`),
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
    maxWaitTimeInMs: 250,
    allowAutoTopicCreation: false,
  });
  const remaining = new Map(work.map((w) => [`${w.topic}:${w.partition}`, w]));
  const topics = [...new Set(work.map((w) => w.topic))];
  const groupOf = new Map(work.map((w) => [w.topic, w.group]));
  let read = 0;
  let partial = false;
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    let finish!: () => void;
    const done = new Promise<void>((resolve) => { finish = resolve; });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        const w = remaining.get(`${topic}:${partition}`);
        if (!w) return;
        const offset = Number(message.offset);
        if (offset >= w.start && offset < w.end) {
          await db.insert(dlqMessages).values(await withAttempts(db, toDlqRow(groupOf.get(topic)!, topic, partition, message))).onConflictDoNothing();
          read++;
        }
        if (offset >= w.end - 1) {
          remaining.delete(`${topic}:${partition}`);
          if (remaining.size === 0) finish();
        }
      },
    });
    for (const w of work) consumer.seek({ topic: w.topic, partition: w.partition, offset: String(w.start) });
    // partitions of the same topics with nothing new start at their end instead of being read again
    for (const t of offsets.filter((o) => topics.includes(o.topic))) {
      for (const p of t.partitions) {
        if (!remaining.has(`${t.topic}:${p.partition}`)) consumer.seek({ topic: t.topic, partition: p.partition, offset: String(p.high) });
      }
    }
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), opts.timeoutMs ?? 20_000).unref());
    partial = (await Promise.race([done.then(() => 'done' as const), timeout])) === 'timeout';
  } finally {
    await consumer.disconnect().catch(() => {});
  }
  if (partial) logger?.warn({ remaining: [...remaining.keys()] }, 'ops DLQ reader stopped at its time limit');
  return { read, topics: topics.length, partial };
}

const g = globalThis as unknown as { __pinOpsDlqSync?: Map<string, { at: number; running?: Promise<DlqSyncResult> }> };
const syncState = (g.__pinOpsDlqSync ??= new Map());

/**
 * syncDlqMessages for a page read: concurrent callers share one read, and with `minIntervalMs` a process
 * reads at most that often. Without anything new a read costs one watermark request and one query.
 */
export async function syncDlqThrottled(db: Db, env: PlatformEnv, logger?: Logger, minIntervalMs = 0): Promise<DlqSyncResult | null> {
  const key = `${env.KAFKA_BROKERS}|${env.KAFKA_TOPIC_PREFIX}|${env.DATABASE_URL}`;
  const s = syncState.get(key) ?? { at: 0 };
  syncState.set(key, s);
  if (s.running) return s.running;
  if (Date.now() - s.at < minIntervalMs) return null;
  s.running = syncDlqMessages(db, env, logger).finally(() => {
    s.at = Date.now();
    s.running = undefined;
  });
  return s.running;
}

export interface DlqGroupSize {
  group: string;
  topic: string;
  /** records retained on the DLQ topic */
  retained: number;
  /** of those, decided (requeued / discarded) */
  decided: number;
  /** retained − decided: what still needs a decision */
  size: number;
}

/** DLQ size per group: records on `<group>.dlq` (high − low per partition) minus the decided ones still retained. */
export async function getDlqSizes(db: DbOrTx, env: PlatformEnv, offsets?: { group: string; topic: string; partitions: PartitionOffsets[] }[]): Promise<DlqGroupSize[]> {
  const topics = offsets ?? (await dlqTopicOffsets(env));
  const out: DlqGroupSize[] = [];
  for (const t of topics) {
    // decided records are few: read their positions once and count those still retained on the topic
    const rows = await db.execute<{ partition: number; offset: string }>(sql`
      SELECT partition, "offset"::text AS "offset" FROM ${dlqMessages} WHERE topic = ${t.topic} AND decision IS NOT NULL`);
    const range = new Map(t.partitions.map((p) => [p.partition, p]));
    const retained = t.partitions.reduce((sum, p) => sum + Math.max(0, p.high - p.low), 0);
    const decided = rows.filter((r) => {
      const p = range.get(Number(r.partition));
      return p !== undefined && Number(r.offset) >= p.low && Number(r.offset) < p.high;
    }).length;
    out.push({ group: t.group, topic: t.topic, retained, decided, size: Math.max(0, retained - decided) });
  }
  return out;
}

export interface DlqMessageRow {
  topic: string;
  partition: number;
  offset: number;
  consumerGroup: string;
  errorCode: string | null;
  errorMessage: string | null;
  originalTopic: string | null;
  originalPartition: number | null;
  originalOffset: string | null;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  messageId: string | null;
  aggregateId: string | null;
  tenantId: string | null;
  /** when the message first / last reached a DLQ (all records with its messageId) */
  firstSeenAt: Date | null;
  lastSeenAt: Date | null;
  occurrences: number;
  /** deliveries to this group that ended in its DLQ (the first one and every requeue that failed again) */
  attempts: number;
  /** the next attempt: only an operator's requeue ('manual'), or a requeued copy not failed so far ('requeued') */
  nextRetry: 'manual' | 'requeued' | 'none';
  decision: string | null;
  decidedAt: Date | null;
  decidedBy: string | null;
  decisionReason: string | null;
  /** INV-CHS-003 details when the code is CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH */
  holdMismatch: { propertyObjectId: string; objectNumber: string | null; projectId: string | null; buildingId: string | null; bookingId: string | null; eventDealId: string | null; holdDealId: string | null; objectStatus: string; detail: string | null } | null;
}

const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(String(v)));

export async function listDlqMessages(
  db: DbOrTx,
  input: { scope: TenantScope; group?: string; includeDecided?: boolean; limit?: number },
): Promise<DlqMessageRow[]> {
  const rows = await db.execute<Record<string, unknown>>(sql`
    SELECT d.*, s.first_seen, s.last_seen, s.occurrences,
           hm.property_object_id AS hm_object, po.number AS hm_number, po.project_id AS hm_project, po.building_id AS hm_building, hm.booking_id AS hm_booking, hm.event_deal_id AS hm_event_deal,
           hm.hold_deal_id AS hm_hold_deal, hm.object_status AS hm_status, hm.detail AS hm_detail
    FROM ${dlqMessages} d
    LEFT JOIN LATERAL (
      SELECT min(x.failed_at) AS first_seen, max(x.failed_at) AS last_seen, count(*)::int AS occurrences
      FROM ${dlqMessages} x WHERE x.message_id = d.message_id AND x.consumer_group = d.consumer_group
    ) s ON d.message_id IS NOT NULL
    LEFT JOIN LATERAL (
      SELECT * FROM chessboard.v_hold_mismatches h WHERE h.message_id = d.message_id ORDER BY h.id DESC LIMIT 1
    ) hm ON d.error_code = 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH'
    LEFT JOIN chessboard.v_property_objects po ON po.id = hm.property_object_id
    WHERE ${input.includeDecided ? sql`TRUE` : sql`d.decision IS NULL`}
      AND NOT EXISTS (SELECT 1 FROM ${dlqMessages} n WHERE n.retry_of = d.topic || '/' || d.partition || '/' || d."offset")
      AND ${input.group ? sql`d.consumer_group = ${input.group}` : sql`TRUE`}
      AND ${input.scope === null ? sql`TRUE` : sql`d.tenant_id = ${input.scope}`}
    ORDER BY d.failed_at DESC NULLS LAST, d.topic, d.partition, d."offset" DESC
    LIMIT ${Math.min(input.limit ?? 200, 1000)}`);
  return rows.map((r) => ({
    topic: String(r.topic),
    partition: Number(r.partition),
    offset: Number(r.offset),
    consumerGroup: String(r.consumer_group),
    errorCode: (r.error_code as string | null) ?? null,
    errorMessage: (r.error_message as string | null) ?? null,
    originalTopic: (r.original_topic as string | null) ?? null,
    originalPartition: r.original_partition === null ? null : Number(r.original_partition),
    originalOffset: (r.original_offset as string | null) ?? null,
    key: (r.key as string | null) ?? null,
    value: (r.value as string | null) ?? null,
    headers: (typeof r.headers === 'string' ? JSON.parse(r.headers) : r.headers ?? {}) as Record<string, string>,
    messageId: (r.message_id as string | null) ?? null,
    aggregateId: (r.aggregate_id as string | null) ?? null,
    tenantId: (r.tenant_id as string | null) ?? null,
    firstSeenAt: toDate(r.first_seen ?? r.first_failed_at ?? r.failed_at),
    lastSeenAt: toDate(r.last_seen ?? r.failed_at),
    occurrences: r.occurrences === null || r.occurrences === undefined ? 1 : Number(r.occurrences),
    attempts: Number(r.attempts ?? 1),
    nextRetry: r.decision === null || r.decision === undefined ? 'manual' : r.decision === 'requeued' ? 'requeued' : 'none',
    decision: (r.decision as string | null) ?? null,
    decidedAt: toDate(r.decided_at),
    decidedBy: (r.decided_by as string | null) ?? null,
    decisionReason: (r.decision_reason as string | null) ?? null,
    holdMismatch: r.hm_object
      ? {
          propertyObjectId: String(r.hm_object),
          objectNumber: (r.hm_number as string | null) ?? null,
          projectId: (r.hm_project as string | null) ?? null,
          buildingId: (r.hm_building as string | null) ?? null,
          bookingId: (r.hm_booking as string | null) ?? null,
          eventDealId: (r.hm_event_deal as string | null) ?? null,
          holdDealId: (r.hm_hold_deal as string | null) ?? null,
          objectStatus: String(r.hm_status),
          detail: (r.hm_detail as string | null) ?? null,
        }
      : null,
  }));
}

export interface DlqRef {
  topic: string;
  partition: number;
  offset: number;
}

async function lockUndecided(tx: DbOrTx, ref: DlqRef, scope: TenantScope) {
  const [row] = await tx
    .select()
    .from(dlqMessages)
    .where(and(eq(dlqMessages.topic, ref.topic), eq(dlqMessages.partition, ref.partition), eq(dlqMessages.offset, ref.offset)))
    .for('update');
  if (!row || (scope !== null && row.tenantId !== scope)) throw new AppError(DLQ_ERRORS.NOT_FOUND, 'NOT_FOUND', 'DLQ message not found');
  if (row.decision) throw new AppError(DLQ_ERRORS.ALREADY_DECIDED, 'CONFLICT', `DLQ message already ${row.decision}`, { decision: row.decision });
  return row;
}

/** How a requeue sends the copy: one idempotent producer per call, or one shared by a batch (sends in turn, never concurrently). */
type SendCopy = (message: { topic: string; key: string | null; value: string | null; headers: Record<string, string> }) => Promise<void>;

async function withProducer<T>(env: PlatformEnv, logger: Logger | undefined, work: (send: SendCopy) => Promise<T>): Promise<T> {
  // connected at the first send: a batch whose records were all decided meanwhile never touches the broker
  let producer: ReturnType<typeof createIdempotentProducer> | null = null;
  try {
    return await work(async (m) => {
      if (!producer) {
        producer = createIdempotentProducer(opsKafka(env, logger));
        await producer.connect();
      }
      await producer.send({ topic: m.topic, acks: -1, messages: [{ key: m.key, value: m.value, headers: m.headers }] });
    });
  } finally {
    await (producer as ReturnType<typeof createIdempotentProducer> | null)?.disconnect().catch(() => {});
  }
}

type DecisionInput = DlqRef & { actor: Actor; reason: string; scope: TenantScope; now?: Date };

/**
 * Requeue: produce the original key/value/headers to the original topic and record the decision.
 * The consumer's inbox remembers a rejected messageId (result 'rejected'), which would make the
 * requeued copy a duplicate no-op; the inbox's owner forgets that one row in the same transaction
 * (its inbox-replay command) so the message is really tried again. The produce happens inside the transaction: if it fails, nothing
 * is recorded; if the commit fails after it, the copy is a duplicate the inbox will drop.
 */
export async function requeueDlqMessage(db: Db, env: PlatformEnv, input: DecisionInput, logger?: Logger): Promise<{ originalTopic: string; messageId: string | null }> {
  return withProducer(env, logger, (send) => requeueWith(db, send, input));
}

/** Each inbox's owner forgets a rejection through its own command (ops writes no inbox). */
export const INBOX_REPLAY: Record<ConsumerDefinition['inbox'], (tx: DbOrTx, input: { consumer: string; messageId: string }) => Promise<void>> = {
  catalog: forgetCatalogRejection,
  chessboard: forgetChessboardRejection,
  crm: forgetCrmRejection,
  messenger: forgetMessengerRejection,
  notifications: forgetNotificationsRejection,
  rewards: forgetRewardsRejection,
};

async function requeueWith(db: Db, send: SendCopy, input: DecisionInput): Promise<{ originalTopic: string; messageId: string | null }> {
  const now = input.now ?? new Date();
  return db.transaction(async (tx) => {
    const row = await lockUndecided(tx, input, input.scope);
    if (!row.originalTopic) throw new AppError(DLQ_ERRORS.NO_ORIGINAL_TOPIC, 'PRECONDITION_FAILED', 'the DLQ record does not name its original topic');
    const group = consumerGroups().find((c) => c.group === row.consumerGroup);
    if (row.messageId && group) await INBOX_REPLAY[group.inbox](tx, { consumer: row.consumerGroup, messageId: row.messageId });
    await recordDecision(tx, row, 'requeued', input, now);
    // for the rejecting group only: the other groups on the topic took the original already
    await send({ topic: row.originalTopic, key: row.key, value: row.value, headers: { ...row.headers, 'ops.requeued-from': `${row.topic}/${row.partition}/${row.offset}`, [REQUEUE_FOR_HEADER]: row.consumerGroup } });
    return { originalTopic: row.originalTopic, messageId: row.messageId };
  });
}

/** The decision on a locked, undecided record: hidden from the list, an INV-CHS-003 record resolved, audited. */
async function recordDecision(tx: DbOrTx, row: typeof dlqMessages.$inferSelect, decision: 'requeued' | 'discarded', input: DecisionInput, now: Date): Promise<void> {
  if (row.errorCode === 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH' && row.messageId) {
    await resolveHoldMismatch(tx, { messageId: row.messageId, at: now });
  }
  await tx.update(dlqMessages)
    .set({ decision, decidedAt: now, decidedBy: input.actor.userId, decisionReason: input.reason })
    .where(and(eq(dlqMessages.topic, row.topic), eq(dlqMessages.partition, row.partition), eq(dlqMessages.offset, row.offset)));
  await recordAudit(tx, {
    at: now, actor: input.actor, action: decision === 'requeued' ? 'ops.dlq.requeue' : 'ops.dlq.discard', targetType: 'DlqMessage',
    targetId: `${row.topic}/${row.partition}/${row.offset}`,
    reason: input.reason, details: { originalTopic: row.originalTopic, messageId: row.messageId, errorCode: row.errorCode, key: row.key },
  });
}

/** Discard: the message will not be retried; the decision and the reason are recorded. */
export async function discardDlqMessage(db: Db, input: DecisionInput): Promise<void> {
  const now = input.now ?? new Date();
  await db.transaction(async (tx) => {
    const row = await lockUndecided(tx, input, input.scope);
    await recordDecision(tx, row, 'discarded', input, now);
  });
}

/** One record's outcome in a bulk decision: done, or the domain code that refused it (others go on). */
export interface DlqBulkOutcome extends DlqRef {
  ok: boolean;
  code: string | null;
}

type BulkInput = { refs: DlqRef[]; actor: Actor; reason: string; scope: TenantScope; now?: Date };

/**
 * Bulk decisions (Hangfire-style: select many, requeue or discard them with one reason). Each record is
 * its own transaction, in the order given, so one that was decided meanwhile or belongs to another
 * tenant is reported and skipped without undoing the others; requeues share one producer.
 */
export async function requeueDlqMessages(db: Db, env: PlatformEnv, input: BulkInput, logger?: Logger): Promise<DlqBulkOutcome[]> {
  return withProducer(env, logger, (send) => eachRef(input, (ref) => requeueWith(db, send, { ...input, ...ref })));
}

export async function discardDlqMessages(db: Db, input: BulkInput): Promise<DlqBulkOutcome[]> {
  return eachRef(input, (ref) => discardDlqMessage(db, { ...input, ...ref }));
}

async function eachRef(input: BulkInput, decide: (ref: DlqRef) => Promise<unknown>): Promise<DlqBulkOutcome[]> {
  const outcomes: DlqBulkOutcome[] = [];
  for (const ref of input.refs) {
    try {
      await decide(ref);
      outcomes.push({ ...ref, ok: true, code: null });
    } catch (e) {
      if (!isAppError(e)) throw e; // infrastructure failure: stop; the ones done stay done
      outcomes.push({ ...ref, ok: false, code: e.code });
    }
  }
  return outcomes;
}

/** The DLQ topic of a consumer group in this environment. */
export const dlqTopicOf = (env: PlatformEnv, group: string) => withPrefix(env.KAFKA_TOPIC_PREFIX, dlqTopic(group));
