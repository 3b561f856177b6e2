import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { sql } from 'drizzle-orm';
import { pgSchema } from 'drizzle-orm/pg-core';
import { contracts, eventTypes, type Topic } from '../../contracts';
import type { z } from 'zod';
import { preparedQuery, preparedWrite, type Tx } from '../db';
import { traceHeaders } from '../tracing';
import { outboxTable } from './table';

/**
 * The name of a context's outbox: its schema (`<name>.outbox`, built by outboxTable in the context's
 * schema.ts). The composition root lists the outboxes (server/main/outboxes.ts).
 */
export type OutboxName = string;
/**
 * A handle on each `<name>.outbox` for the inserts: every outbox is outboxTable's shape, so platform
 * addresses one by its schema name (as the relay's SQL does) instead of importing the context's schema.
 */
const outboxOf = (name: OutboxName) => {
  let outbox = OUTBOXES.get(name);
  if (!outbox) OUTBOXES.set(name, (outbox = outboxTable(pgSchema(name))));
  return outbox;
};
const OUTBOXES = new Map<OutboxName, ReturnType<typeof outboxTable>>();
/** One event's row of an outbox, built once and run prepared (db.ts preparedWrite); the other columns keep their defaults. */
const outboxInsert = (name: OutboxName) => preparedWrite(`outbox_insert_${name}`, outboxOf(name),
  ['messageId', 'topic', 'key', 'aggregateType', 'aggregateId', 'payload', 'headers'],
  (db, values) => db.insert(outboxOf(name)).values(values));
const OUTBOX_INSERTS = new Map<OutboxName, ReturnType<typeof outboxInsert>>();
const insertInto = (name: OutboxName) => {
  let insert = OUTBOX_INSERTS.get(name);
  if (!insert) OUTBOX_INSERTS.set(name, (insert = outboxInsert(name)));
  return insert;
};
export const outboxChannel = (name: OutboxName) => `pin_outbox_${name}`;

export interface OutboxEvent<T extends Topic> {
  topic: T;
  aggregateType: string;
  aggregateId: string;
  tenantId: string;
  payload: z.infer<(typeof contracts)[T]>['payload'];
  correlationId: string;
  causationId?: string | null;
  occurredAt?: Date;
  messageId?: string;
}

/** The outbox row of one event: its envelope validated with the topic's contract, the writer's trace headers. */
function outboxRow<T extends Topic>(outbox: OutboxName, event: OutboxEvent<T>) {
  const messageId = event.messageId ?? randomUUID();
  const envelope = contracts[event.topic].parse({
    messageId,
    type: eventTypes[event.topic],
    contractVersion: 1,
    aggregateType: event.aggregateType,
    aggregateId: event.aggregateId,
    occurredAt: (event.occurredAt ?? new Date()).toISOString(),
    tenantId: event.tenantId,
    correlationId: event.correlationId,
    causationId: event.causationId ?? null,
    payload: event.payload,
  });
  // per item on the writer's span (a job cycle writes many): which event, for which tenant, in which run/request
  trace.getActiveSpan()?.addEvent('outbox.write', {
    'pin.outbox': outbox, 'messaging.destination.name': event.topic, 'messaging.message.id': messageId,
    'pin.tenant_id': event.tenantId, 'pin.correlation_id': event.correlationId,
  });
  return {
    messageId,
    topic: event.topic,
    key: event.aggregateId,
    aggregateType: event.aggregateType,
    aggregateId: event.aggregateId,
    payload: envelope,
    // traceparent of the writing span (command, job cycle or consumer): the relay copies the headers
    // onto the Kafka message and the consumer continues the trace from it (tracing.ts)
    headers: { correlationId: event.correlationId, causationId: event.causationId ?? null, contractVersion: '1', ...traceHeaders() },
  };
}

/** What a NOTIFY on an outbox channel carries for the live feed: the tenant, and the buildings touched. */
export interface OutboxNotice {
  /** tenant of the events */
  t: string;
  /** buildings whose cells the events may change; absent: unknown (every building of the tenant) */
  b?: string[];
}

/** NOTIFY payloads are limited to 8000 bytes; a longer building list is dropped (= every building of the tenant). */
const MAX_NOTICE_CHARS = 7000;

/**
 * One notice per tenant of the events: the live feed (server/chessboard/live-feed.ts) delivers it only
 * to that tenant's streams, and re-reads only the named buildings. A building is named when the event's
 * payload has a `buildingId` (a property object's status change or upsert); an event without one makes
 * the notice name no buildings.
 */
export function outboxNotices(events: readonly { tenantId: string; payload: unknown }[]): string[] {
  const byTenant = new Map<string, Set<string> | null>();
  for (const e of events) {
    const buildingId = (e.payload as { buildingId?: unknown } | null)?.buildingId;
    if (!byTenant.has(e.tenantId)) byTenant.set(e.tenantId, new Set());
    const known = byTenant.get(e.tenantId);
    if (!known) continue; // already "every building"
    if (typeof buildingId === 'string') known.add(buildingId);
    else byTenant.set(e.tenantId, null);
  }
  return [...byTenant].map(([t, b]) => {
    const withBuildings = JSON.stringify({ t, ...(b ? { b: [...b] } : {}) } satisfies OutboxNotice);
    return withBuildings.length <= MAX_NOTICE_CHARS ? withBuildings : JSON.stringify({ t } satisfies OutboxNotice);
  });
}

/** NOTIFY of the notices, in the writing transaction (delivered at its commit, dropped at its rollback). */
function notifyOutbox(tx: Tx, outbox: OutboxName, events: readonly { tenantId: string; payload: unknown }[]) {
  return outboxNotify(tx, { channel: outboxChannel(outbox), notices: JSON.stringify(outboxNotices(events)) });
}
/** Built once and run prepared (one round trip, pipelined with the command's writes): its text is fixed. */
const outboxNotify = preparedQuery('outbox_notify', (db) => db
  .select({ notified: sql`pg_notify(${sql.placeholder('channel')}, n)` })
  .from(sql`jsonb_array_elements_text(${sql.placeholder('notices')}::jsonb) AS n`));

/**
 * Inserts one event into the context's outbox inside the caller's transaction, so the state change
 * and its event commit together. The envelope is validated with the topic's shared zod contract
 * (a producer bug fails the command instead of poisoning consumers). NOTIFY is delivered at commit.
 */
export async function writeOutbox<T extends Topic>(tx: Tx, outbox: OutboxName, event: OutboxEvent<T>): Promise<string> {
  const row = outboxRow(outbox, event);
  // the INSERT and the NOTIFY are sent together (postgres.js pipelines statements issued at once on the
  // transaction's connection): one round trip, one socket write, instead of two
  await Promise.all([
    // both prepared (named): see platform/db.ts — unprepared, each took two round trips and the two were not pipelined
    insertInto(outbox)(tx, row).then(() => undefined),
    notifyOutbox(tx, outbox, [event]).then(() => undefined),
  ]);
  return row.messageId;
}

/** An outbox row as it travels in a jsonb parameter (snake_case: the column names). */
export interface OutboxJsonRow {
  message_id: string;
  topic: string;
  key: string;
  aggregate_type: string;
  aggregate_id: string;
  payload: unknown;
  headers: Record<string, unknown>;
}

/**
 * The outbox rows of a batch of events, each envelope validated with its topic's contract as
 * writeOutbox does, plus the NOTIFY notices of the batch (outboxNotices): for a writer that inserts them
 * inside a statement of its own (the hold-expiration job's one-statement phase) instead of writeOutboxMany.
 */
export function outboxBatch<T extends Topic>(outbox: OutboxName, events: OutboxEvent<T>[]): { rows: OutboxJsonRow[]; notices: string[] } {
  const rows = events.map((event) => {
    const r = outboxRow(outbox, event);
    return {
      message_id: r.messageId, topic: r.topic, key: r.key, aggregate_type: r.aggregateType, aggregate_id: r.aggregateId, payload: r.payload, headers: r.headers,
    };
  });
  return { rows, notices: outboxNotices(events) };
}

/**
 * `writeOutbox` for a batch (a job releasing hundreds of objects in one transaction): the same rows,
 * validated the same way, in ONE INSERT and one NOTIFY (sent together) instead of two statements per event.
 * The rows travel as one jsonb parameter (a multi-row VALUES of hundreds of rows costs more to build in
 * drizzle than the insert itself) and are inserted in the order of `events`, so their ids follow it.
 * Returns the messageIds in order.
 */
export async function writeOutboxMany<T extends Topic>(tx: Tx, outbox: OutboxName, events: OutboxEvent<T>[]): Promise<string[]> {
  if (events.length === 0) return [];
  const { rows: json } = outboxBatch(outbox, events);
  const inserted = tx.execute(sql`
    INSERT INTO ${outboxOf(outbox)} (message_id, topic, key, aggregate_type, aggregate_id, payload, headers)
    SELECT r.message_id, r.topic, r.key, r.aggregate_type, r.aggregate_id, r.payload, r.headers
    FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(json)}::jsonb)
      AS (message_id uuid, topic text, key text, aggregate_type text, aggregate_id uuid, payload jsonb, headers jsonb)) WITH ORDINALITY
      AS r(message_id, topic, key, aggregate_type, aggregate_id, payload, headers, ord)
    ORDER BY r.ord`).then(() => undefined);
  // sent right behind the INSERT (postgres.js pipelines statements issued together on one connection)
  const notified = notifyOutbox(tx, outbox, events).then(() => undefined);
  await Promise.all([inserted, notified]);
  return json.map((r) => r.message_id);
}
