import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db';
import type { OutboxName } from '../../platform/outbox/write';
import { registeredOutboxes } from '../../platform/registry';
import { withPrefix } from '../../platform/kafka/topics';
import { num, toDate, ts } from './sql';

/** Ops read side: outboxes, consumers' lag in time, DLQ topic names. */

/* ---------------------------------------------------------------------------------------------
 * Outboxes. Each query walks one partial index (unpublished rows / published_at), never the table.
 * ------------------------------------------------------------------------------------------- */

const outboxTable = (o: OutboxName) => sql.raw(`${o}.outbox`);

export interface OutboxStats {
  outbox: OutboxName;
  pending: number;
  oldestPendingAt: Date | null;
  oldestPendingAgeMs: number | null;
  publishedLast5Min: number;
  /** rows published per minute, averaged over the last 5 minutes */
  publishRatePerMin: number;
  /** unpublished rows whose publishing already failed at least once */
  failing: number;
}

export async function getOutboxStats(db: DbOrTx, input: { now: Date }): Promise<OutboxStats[]> {
  const out: OutboxStats[] = [];
  for (const o of registeredOutboxes()) {
    const [p] = await db.execute<{ pending: number; oldest: string | null; failing: number }>(sql`
      SELECT count(*)::int AS pending, min(created_at) AS oldest,
             count(*) FILTER (WHERE attempts > 0 OR last_error IS NOT NULL)::int AS failing
      FROM ${outboxTable(o)} WHERE published_at IS NULL`);
    const [r] = await db.execute<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM ${outboxTable(o)}
      WHERE published_at IS NOT NULL AND published_at > ${ts(new Date(input.now.getTime() - 5 * 60_000))} AND published_at <= ${ts(input.now)}`);
    const oldest = toDate(p.oldest);
    out.push({
      outbox: o,
      pending: num(p.pending),
      oldestPendingAt: oldest,
      oldestPendingAgeMs: oldest ? Math.max(0, input.now.getTime() - oldest.getTime()) : null,
      publishedLast5Min: num(r.n),
      publishRatePerMin: num(r.n) / 5,
      failing: num(p.failing),
    });
  }
  return out;
}

export interface FailingOutboxRow {
  outbox: OutboxName;
  id: number;
  messageId: string;
  topic: string;
  key: string;
  createdAt: Date;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: Date | null;
}

export async function listFailingOutboxRows(db: DbOrTx, input: { outbox: OutboxName; limit?: number; scope?: string | null }): Promise<FailingOutboxRow[]> {
  // a tenant-scoped reader sees its tenant's rows only (their keys are booking / object ids of that tenant)
  const rows = await db.execute<Record<string, unknown>>(sql`
    SELECT id, message_id, topic, key, created_at, attempts, last_error, next_attempt_at
    FROM ${outboxTable(input.outbox)}
    WHERE published_at IS NULL AND (attempts > 0 OR last_error IS NOT NULL)
      ${input.scope ? sql`AND payload->>'tenantId' = ${input.scope}` : sql``}
    ORDER BY id LIMIT ${Math.min(input.limit ?? 50, 500)}`);
  return rows.map((r) => ({
    outbox: input.outbox,
    id: num(r.id),
    messageId: String(r.message_id),
    topic: String(r.topic),
    key: String(r.key),
    createdAt: toDate(r.created_at)!,
    attempts: num(r.attempts),
    lastError: (r.last_error as string | null) ?? null,
    nextAttemptAt: toDate(r.next_attempt_at),
  }));
}

/**
 * How far behind a consumer group is in time: the publish time of the oldest message of its topics
 * that the relay published but the group's inbox has not recorded (applied, no-op or rejected).
 * Kafka offsets say how many messages wait; this says since when. Only messages that went through an
 * outbox are seen (all of ours do), so it is an estimate for `now - that time`.
 */
export async function estimateConsumerTimeLag(
  db: DbOrTx,
  input: { now: Date; group: string; inbox: string; topics: string[] },
): Promise<number | null> {
  const byOutbox = new Map<OutboxName, string[]>();
  for (const t of input.topics) {
    const o: OutboxName | null = t.startsWith('pin.crm.') ? 'crm' : t.startsWith('pin.chessboard.') ? 'chessboard' : null;
    if (o) byOutbox.set(o, [...(byOutbox.get(o) ?? []), t]);
  }
  let oldest: Date | null = null;
  for (const [o, topics] of byOutbox) {
    const [r] = await db.execute<{ oldest: string | null }>(sql`
      SELECT min(o.published_at) AS oldest FROM ${outboxTable(o)} o
      WHERE o.published_at IS NOT NULL AND o.published_at <= ${ts(input.now)}
        AND o.topic IN (${sql.join(topics.map((t) => sql`${t}`), sql`, `)})
        AND NOT EXISTS (SELECT 1 FROM ${sql.identifier(input.inbox)}.inbox i WHERE i.consumer = ${input.group} AND i.message_id = o.message_id)`);
    const d = toDate(r.oldest);
    if (d && (!oldest || d < oldest)) oldest = d;
  }
  return oldest ? Math.max(0, input.now.getTime() - oldest.getTime()) : null;
}

/** DLQ topic name of a group for this environment (shared by the overview and the DLQ page). */
export const prefixedDlqTopic = (prefix: string, group: string) => withPrefix(prefix, `${group}.dlq`);
