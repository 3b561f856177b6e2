import type { Producer } from 'kafkajs';
import type postgres from 'postgres';
import { connectPostgres, type Database } from '../db';
import type { PlatformEnv } from '../env';
import type { Logger } from '../logger';
import { counter, gauge, registeredLabel } from '../metrics';
import { toHeaders } from '../kafka/client';
import { withPrefix } from '../kafka/topics';
import { linkFromHeaders, SpanKind, withSpan } from '../tracing';
import type { OutboxName } from './write';

const published = counter('pin_outbox_published_total', 'Outbox rows acknowledged by the broker', ['outbox'], { outbox: registeredLabel('outbox') });
const publishErrors = counter('pin_outbox_publish_errors_total', 'Failed publish attempts of outbox batches', ['outbox'], { outbox: registeredLabel('outbox') });
const pruned = counter('pin_outbox_pruned_total', 'Published outbox rows deleted after the retention period', ['outbox'], { outbox: registeredLabel('outbox') });

let metricsDb: Database | undefined;
let metricsOutboxes: readonly OutboxName[] = [];
/** Backlog gauges are computed at scrape time from the database the process uses, for the outboxes the composition root lists. */
export function bindOutboxMetrics(database: Database, outboxes: readonly OutboxName[]): void {
  metricsDb = database;
  metricsOutboxes = outboxes;
}
// a scrape must not fail (and lose every other metric) while the database is unreachable: on an
// error the gauges keep their last values
gauge('pin_outbox_backlog', 'Unpublished outbox rows', ['outbox'], async function () {
  if (!metricsDb) return;
  try {
    for (const o of metricsOutboxes) {
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
    for (const o of metricsOutboxes) {
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
  private lockClient: postgres.Sql | undefined;
  private lastPrune = 0;

  constructor(
    private readonly outbox: OutboxName,
    private readonly deps: { database: Database; env: PlatformEnv; logger: Logger; producer: Producer },
  ) {}

  /**
   * The advisory lock lives in the session of a single-connection client of the relay's own, not in a
   * reserved pool connection: postgres.js 3.4.x writes a query on a reserved connection whose backend
   * died to a null socket from a setImmediate callback — an uncaught TypeError that ended the worker on
   * every PostgreSQL restart (porsager/postgres#1208). This client reconnects instead; whether the new
   * session still holds the lock is asked, not assumed (a restart drops it, a standby may take it).
   */
  private async holdLock(): Promise<boolean> {
    const client = (this.lockClient ??= connectPostgres(this.deps.env.DATABASE_URL, { max: 1, applicationName: `pin-outbox-relay-lock-${this.outbox}` }));
    try {
      const [{ held }] = await client<{ held: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted) AS held`;
      if (held) return true;
      const [{ locked }] = await client<{ locked: boolean }[]>`SELECT pg_try_advisory_lock(hashtext(${LOCK_KEY(this.outbox)})) AS locked`;
      return locked;
    } catch (e) {
      // a lock session in doubt is dropped whole: the next cycle starts from a new client
      this.lockClient = undefined;
      void client.end({ timeout: 0 }).catch(() => {});
      throw e;
    }
  }

  /** Releases the advisory lock (graceful stop or a one-shot CLI run). */
  async release(): Promise<void> {
    const client = this.lockClient;
    if (!client) return;
    this.lockClient = undefined;
    await client`SELECT pg_advisory_unlock(hashtext(${LOCK_KEY(this.outbox)}))`.catch(() => {});
    await client.end({ timeout: 1 }).catch(() => {});
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
      // Rows in id order, but never a row of an aggregate (key) that has an older row still backing off:
      // taking whatever was due after a broker outage published an aggregate's newer event before its
      // older one (found by the broker-outage fault scenario, test/faults). Other aggregates go on.
      const rows = await sql.unsafe<{ id: string; message_id: string; topic: string; key: string; payload: unknown; headers: Record<string, unknown> }[]>(
        `WITH backing_off AS (
           SELECT key, min(id) AS first_id FROM ${table}
            WHERE published_at IS NULL AND next_attempt_at IS NOT NULL AND next_attempt_at > now() GROUP BY key)
         SELECT o.id, o.message_id, o.topic, o.key, o.payload, o.headers FROM ${table} o
           LEFT JOIN backing_off b ON b.key = o.key
          WHERE o.published_at IS NULL AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())
            AND (b.first_id IS NULL OR o.id < b.first_id)
          ORDER BY o.id LIMIT $1`,
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
      // A short batch was everything due when it was read. A row committed since then sent its NOTIFY after
      // its commit, and a wake-up during a cycle runs one more cycle after it (JobScheduler.wake; the cron
      // tick covers a lost notification), so reading the outbox once more only to find it empty is a round
      // trip per outbox per cycle saved — the relay runs a cycle per burst of commits.
      if (rows.length < this.deps.env.OUTBOX_RELAY_BATCH_SIZE) break;
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
