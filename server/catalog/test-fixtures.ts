import { randomUUID } from 'node:crypto';
import { contracts, eventTypes } from '../contracts';
import type { ChessboardPayload, ChessboardTopic } from '../contracts/chessboard';
import type { AnyEnvelope } from '../contracts/envelope';
import type { Database } from '../platform/db';
import type { HandlerOutcome } from '../platform/kafka/consumer-runner';
import { createKafka } from '../platform/kafka/client';
import type { JobContext } from '../platform/jobs/types';
import type { TestContext } from '../testing/harness';
import { cardProjectionConsumer } from './card-projection.consumer';

/** Test fixtures of the catalog integration tests (rows written directly; events built with the shared contracts). */

export const TENANT = '00000000-0000-4000-8000-00000000aaaa';
export const DAY_MS = 24 * 3600_000;

/** postgres.js binds text; timestamps go as ISO strings with an explicit cast */
const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export interface CardRow {
  id: string;
  status: string;
  sale_status?: string;
  project_id?: string;
  updated_at: Date;
  created_at: Date;
  source_version: number;
  source_updated_at: Date | null;
}

export async function insertProjectCard(
  database: Database,
  c: { id?: string; status?: string; updatedAt?: Date; createdAt?: Date; name?: string; sourceVersion?: number; sourceUpdatedAt?: Date | null },
): Promise<string> {
  const id = c.id ?? randomUUID();
  const updatedAt = c.updatedAt ?? new Date();
  await database.sql`INSERT INTO catalog.project_cards (id, developer_id, name, city, status, source_version, source_updated_at, created_at, updated_at)
    VALUES (${id}, ${TENANT}, ${c.name ?? 'Project'}, 'Moscow', ${c.status ?? 'Published'}, ${c.sourceVersion ?? 1},
            ${iso(c.sourceUpdatedAt === undefined ? updatedAt : c.sourceUpdatedAt)}::timestamptz, ${iso(c.createdAt ?? updatedAt)}::timestamptz,
            ${iso(updatedAt)}::timestamptz)`;
  return id;
}

export async function insertObjectCard(
  database: Database,
  c: { id?: string; projectId?: string; status?: string; saleStatus?: string; updatedAt?: Date; createdAt?: Date; sourceVersion?: number; sourceUpdatedAt?: Date | null },
): Promise<string> {
  const id = c.id ?? randomUUID();
  const updatedAt = c.updatedAt ?? new Date();
  await database.sql`INSERT INTO catalog.property_object_cards
      (id, project_id, building_id, developer_id, number, floor, rooms, area, price, sale_status, status, source_version, source_updated_at, created_at, updated_at)
    VALUES (${id}, ${c.projectId ?? randomUUID()}, ${randomUUID()}, ${TENANT}, '101', 3, 2, 54.5, 9500000, ${c.saleStatus ?? 'Free'},
            ${c.status ?? 'Published'}, ${c.sourceVersion ?? 1}, ${iso(c.sourceUpdatedAt === undefined ? updatedAt : c.sourceUpdatedAt)}::timestamptz,
            ${iso(c.createdAt ?? updatedAt)}::timestamptz, ${iso(updatedAt)}::timestamptz)`;
  return id;
}

/** drizzle's postgres.js client returns timestamps as text: the fixtures hand out Dates */
function withDates(row: Record<string, unknown> | undefined): CardRow | undefined {
  if (!row) return undefined;
  const toDate = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
  return { ...row, updated_at: toDate(row.updated_at), created_at: toDate(row.created_at), source_updated_at: toDate(row.source_updated_at) } as CardRow;
}

export async function objectCard(database: Database, id: string): Promise<CardRow | undefined> {
  const [row] = await database.sql`SELECT * FROM catalog.property_object_cards WHERE id = ${id}`;
  return withDates(row);
}

export async function projectCard(database: Database, id: string): Promise<CardRow | undefined> {
  const [row] = await database.sql`SELECT * FROM catalog.project_cards WHERE id = ${id}`;
  return withDates(row);
}

export async function countRows(database: Database, table: string, where = 'true'): Promise<number> {
  const [r] = await database.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`);
  return r.n;
}

/** A valid envelope of a chessboard topic, parsed with the shared contract. */
export function chessboardEnvelope<T extends ChessboardTopic>(topic: T, aggregateId: string, payload: ChessboardPayload<T>): AnyEnvelope {
  return contracts[topic].parse({
    messageId: randomUUID(),
    type: eventTypes[topic],
    contractVersion: 1,
    aggregateType: topic.includes('project-') ? 'Project' : 'PropertyObject',
    aggregateId,
    occurredAt: new Date().toISOString(),
    tenantId: TENANT,
    correlationId: randomUUID(),
    causationId: null,
    payload,
  }) as AnyEnvelope;
}

/** Applies one event through the consumer's handler in its own transaction (the runner's inbox is bypassed). */
export async function project<T extends ChessboardTopic>(t: TestContext, topic: T, aggregateId: string, payload: ChessboardPayload<T>): Promise<HandlerOutcome> {
  const envelope = chessboardEnvelope(topic, aggregateId, payload);
  return t.database.db.transaction((tx) =>
    cardProjectionConsumer.handle(tx, { topic, envelope, partition: 0, offset: '0' }, { logger: t.logger, env: t.env }));
}

export function objectUpserted(id: string, projectId: string, over: Partial<ChessboardPayload<'pin.chessboard.property-object-upserted.v1'>> = {}): ChessboardPayload<'pin.chessboard.property-object-upserted.v1'> {
  return {
    propertyObjectId: id, tenantId: TENANT, projectId, buildingId: '00000000-0000-4000-8000-0000000000b1',
    number: '12', floor: 4, section: 1, rooms: 2, area: 61.3, price: 12_300_000, status: 'Free', version: 1,
    updatedAt: '2025-01-01T10:00:00.000Z', ...over,
  };
}

export function projectUpserted(id: string, over: Partial<ChessboardPayload<'pin.chessboard.project-upserted.v1'>> = {}): ChessboardPayload<'pin.chessboard.project-upserted.v1'> {
  return { projectId: id, tenantId: TENANT, name: 'Riverside', city: 'Moscow', propertyObjectsFreeCount: 10, version: 1, updatedAt: '2025-01-01T10:00:00.000Z', ...over };
}

export function statusChanged(id: string, projectId: string, over: Partial<ChessboardPayload<'pin.chessboard.property-object-status-changed.v1'>> = {}): ChessboardPayload<'pin.chessboard.property-object-status-changed.v1'> {
  return {
    propertyObjectId: id, tenantId: TENANT, projectId, buildingId: '00000000-0000-4000-8000-0000000000b1',
    fromStatus: 'Free', toStatus: 'Sold', statusSource: 'Crm', reservedUntil: null, bookedUntil: null, holdDealId: null,
    soldAt: '2025-01-02T10:00:00.000Z', statusChangedAt: '2025-01-02T10:00:00.000Z', version: 2, ...over,
  };
}

/** A JobContext for one run against the test database. */
export function jobContext(t: TestContext, over: Partial<JobContext> = {}): JobContext {
  return {
    database: t.database,
    env: t.env,
    logger: t.logger,
    runId: randomUUID(),
    signal: new AbortController().signal,
    trigger: 'manual',
    kafka: createKafka(t.env),
    ...over,
  };
}

/** Resolves when `release()` is called: holds a batch (and its row locks) open in a test. */
export function gate(): { wait: Promise<void>; release: () => void; reached: Promise<void>; arrive: () => void } {
  let release!: () => void;
  let arrive!: () => void;
  const wait = new Promise<void>((r) => { release = r; });
  const reached = new Promise<void>((r) => { arrive = r; });
  return { wait, release, reached, arrive };
}

/** Waits until some backend of this test database waits on a row lock. */
export async function waitForLockWaiter(database: Database, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [r] = await database.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if (r.n > 0) return;
    if (Date.now() > deadline) throw new Error('no backend is waiting on a lock');
    await new Promise((res) => setTimeout(res, 25));
  }
}
