import type { Producer } from 'kafkajs';
import type postgres from 'postgres';
import type { Database } from '../db';
import type { Env } from '../env';
import type { Logger } from '../logger';
import { counter, gauge } from '../metrics';
import { toHeaders } from '../kafka/client';
import { withPrefix } from '../kafka/topics';
import { linkFromHeaders, SpanKind, withSpan } from '../tracing';
import type { OutboxName } from './write';

const published = counter('pin_outbox_published_total', 'Outbox rows acknowledged by the broker', ['outbox']);
const publishErrors = counter('pin_outbox_publish_errors_total', 'Failed publish attempts of outbox batches', ['outbox']);
const pruned = counter('pin_outbox_pruned_total', 'Published outbox rows deleted after the retention period', ['outbox']);

let metricsDb: Database | undefined;
/** Backlog gauges are computed at scrape time from the database the process uses. */
export function bindOutboxMetrics(database: Database): void {
  metricsDb = database;
}
// a scrape must not fail (and lose every other metric) while the database is unreachable: on an
// error the gauges keep their last values
gauge('pin_outbox_backlog', 'Unpublished outbox rows', ['outbox'], async function () {
  if (!metricsDb) return;
  try {
    for (const o of ['crm', 'chessboard'] as const) {
      const [r] = await metricsDb.sql.unsafe(`SELECT count(*)::int AS n FROM ${o}.outbox WHERE published_at IS NULL`);
      this.set({ outbox: o }, r.n);
    }
  } catch {
    /* kept */
  }
});
gauge('pin_outbox_oldest_pending_age_seconds', 'Age of the oldest unpublished outbox row', ['outbox'], async function () {
  if (!metricsDb) return;
  try {
    for (const o of ['crm', 'chessboard'] as const) {
      const [r] = await metricsDb.sql.unsafe(
        `SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age FROM ${o}.outbox WHERE published_at IS NULL`,
      );
      this.set({ outbox: o }, r.age);
    }
  } catch {
    /* kept */
  }
});

export interface RelaySummary {
  outbox: OutboxName;
  published: number;
  failed: number;
  batches: number;
  skippedLocked: boolean;
  pruned: number;
  error?: string;
}

const LOCK_KEY = (outbox: OutboxName) => `pin:outbox-relay:${outbox}`;

/**
 * Publishes one outbox table to Kafka (DESIGN decision 4). Only the instance that holds the
 * advisory lock (on a dedicated, reserved connection) publishes; a standby gets `skippedLocked` and
 * takes over when the holder's connection dies. Rows go out in id order — for one aggregate id
 * order is commit order, because its writers serialise on the aggregate's row lock — and are
 * marked published only after the broker acknowledged the whole batch (at-least-once).
 */
export class OutboxRelay {
  private lockConn: postgres.ReservedSql | undefined;
  private lastPrune = 0;

  constructor(
    private readonly outbox: OutboxName,
    private readonly deps: { database: Database; env: Env; logger: Logger; producer: Producer },
  ) {}

  private async holdLock(): Promise<boolean> {
    if (this.lockConn) {
      try {
        await this.lockConn`SELECT 1`;
        return true;
      } catch {
        this.lockConn.release();
        this.lockConn = undefined;
      }
    }
    const conn = await this.deps.database.sql.reserve();
    const [{ locked }] = await conn`SELECT pg_try_advisory_lock(hashtext(${LOCK_KEY(this.outbox)})) AS locked`;
    if (!locked) {
      conn.release();
      return false;
    }
    this.lockConn = conn;
    return true;
  }

  /** Releases the advisory lock (graceful stop or a one-shot CLI run). */
  async release(): Promise<void> {
    if (!this.lockConn) return;
    await this.lockConn`SELECT pg_advisory_unlock(hashtext(${LOCK_KEY(this.outbox)}))`.catch(() => {});
    this.lockConn.release();
    this.lockConn = undefined;
  }

  /** Publishes until the outbox is empty, a batch fails, or `signal` is aborted. */
  async drain(signal?: AbortSignal): Promise<RelaySummary> {
    const summary: RelaySummary = { outbox: this.outbox, published: 0, failed: 0, batches: 0, skippedLocked: false, pruned: 0 };
    if (!(await this.holdLock())) {
      summary.skippedLocked = true;
      return summary;
    }
    const { sql } = this.deps.database;
    const table = `${this.outbox}.outbox`;
    const prefix = this.deps.env.KAFKA_TOPIC_PREFIX;
    const log = this.deps.logger.child({ outbox: this.outbox });
    while (!signal?.aborted) {
      const rows = await sql.unsafe<{ id: string; message_id: string; topic: string; key: string; payload: unknown; headers: Record<string, unknown> }[]>(
        `SELECT id, message_id, topic, key, payload, headers FROM ${table}
         WHERE published_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= now())
         ORDER BY id LIMIT $1`,
        [this.deps.env.OUTBOX_RELAY_BATCH_SIZE],
      );
      if (rows.length === 0) break;
      // keep id order: consecutive rows of one topic form one topicMessages entry
      const topicMessages: { topic: string; messages: { key: string; value: string; headers: Record<string, string> }[] }[] = [];
      for (const r of rows) {
        const topic = withPrefix(prefix, r.topic);
        const last = topicMessages[topicMessages.length - 1];
        const message = {
          key: r.key,
          value: JSON.stringify(r.payload),
          headers: toHeaders({ ...r.headers, messageId: r.message_id }),
        };
        if (last && last.topic === topic) last.messages.push(message);
        else topicMessages.push({ topic, messages: [message] });
      }
      const ids = rows.map((r) => r.id);
      try {
        // one PRODUCER span per batch, linked to the span that wrote each row (its traceparent header);
        // the messages keep the writer's traceparent, so the consumer's span is the writer's child
        const links = rows.map((r) => linkFromHeaders(r.headers)).filter((l) => l !== null);
        await withSpan(`outbox-relay publish ${this.outbox}`, {
          kind: SpanKind.PRODUCER,
          links,
          attributes: { 'messaging.system': 'kafka', 'messaging.batch.message_count': rows.length, 'pin.outbox': this.outbox },
        }, () => this.deps.producer.sendBatch({ topicMessages, acks: -1 }));
      } catch (e) {
        const message = (e as Error).message ?? String(e);
        publishErrors.inc({ outbox: this.outbox });
        summary.failed += rows.length;
        summary.error = message;
        log.error({ count: rows.length, firstId: ids[0], err: { message } }, 'relay publish failed');
        await sql.unsafe(
          `UPDATE ${table} SET attempts = attempts + 1, last_error = $2,
             next_attempt_at = now() + least(interval '60 seconds', interval '500 milliseconds' * power(2, least(attempts, 7)))
           WHERE id = ANY($1::bigint[])`,
          [ids, message.slice(0, 2000)],
        );
        break;
      }
      await sql.unsafe(`UPDATE ${table} SET published_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = ANY($1::bigint[])`, [ids]);
      published.inc({ outbox: this.outbox }, rows.length);
      summary.published += rows.length;
      summary.batches += 1;
      log.debug({ count: rows.length, firstId: ids[0], lastId: ids[ids.length - 1] }, 'relay published');
    }
    if (Date.now() - this.lastPrune > 60_000) {
      this.lastPrune = Date.now();
      const res = await sql.unsafe(
        `DELETE FROM ${table} WHERE published_at IS NOT NULL AND published_at < now() - ($1::bigint * interval '1 millisecond')`,
        [this.deps.env.OUTBOX_RETENTION_MS],
      );
      summary.pruned = res.count;
      if (res.count) pruned.inc({ outbox: this.outbox }, res.count);
    }
    return summary;
  }
}
