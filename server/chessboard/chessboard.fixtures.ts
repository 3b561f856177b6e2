import { randomUUID } from 'node:crypto';
import { contracts, eventTypes, type AnyEnvelope } from '../contracts';
import type { CrmPayload, CrmTopic } from '../contracts/crm';
import type { Database } from '../platform/db';
import type { Env } from '../platform/env';
import type { JobContext } from '../platform/jobs/types';
import type { ConsumedMessage } from '../platform/kafka/consumer-runner';
import { createKafka } from '../platform/kafka/client';
import type { Logger } from '../platform/logger';
import { projectObjects } from '../testing/crm-projection';

/** Test support for the chessboard integration tests (not a test file itself). */

export const TENANT = '0a000000-0000-4000-8000-000000000001';
export const OTHER_TENANT = '0a000000-0000-4000-8000-000000000002';

export interface Place {
  tenantId: string;
  projectId: string;
  buildingId: string;
}

/** A project with one building, inserted directly (the commands have their own tests). */
export async function insertProject(database: Database, tenantId = TENANT): Promise<Place> {
  const projectId = randomUUID();
  const buildingId = randomUUID();
  await database.sql`INSERT INTO chessboard.projects (id, tenant_id, name, city) VALUES (${projectId}, ${tenantId}, ${'Project ' + projectId.slice(0, 4)}, 'Москва')`;
  await database.sql`INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors) VALUES (${buildingId}, ${tenantId}, ${projectId}, 'B', 4, 30)`;
  return { tenantId, projectId, buildingId };
}

export interface ObjectSpec {
  status: 'Free' | 'Reserved' | 'Booked' | 'Sold' | 'Hidden';
  /** the timer of a held object */
  timer?: Date;
  holdDealId?: string;
  holdBookingId?: string | null;
  version?: number;
}

/** Inserts one object per spec; returns their ids in order. Held objects get a deal (and a booking) unless given. */
export async function insertObjects(database: Database, place: Place, specs: ObjectSpec[]): Promise<string[]> {
  const rows = specs.map((s, i) => {
    const held = s.status === 'Reserved' || s.status === 'Booked';
    return {
      id: randomUUID(),
      tenant_id: place.tenantId,
      project_id: place.projectId,
      building_id: place.buildingId,
      section: 1 + (i % 4),
      floor: 1 + (Math.floor(i / 4) % 30),
      number: String(1000 + i),
      rooms: 2,
      area: 55.5,
      price: 10_000_000,
      status: s.status,
      reserved_until: s.status === 'Reserved' ? (s.timer ?? new Date(Date.now() + 3600_000)).toISOString() : null,
      booked_until: s.status === 'Booked' ? (s.timer ?? new Date(Date.now() + 86_400_000)).toISOString() : null,
      hold_deal_id: held ? s.holdDealId ?? randomUUID() : null,
      hold_booking_id: held ? (s.holdBookingId === undefined ? randomUUID() : s.holdBookingId) : null,
      sold_at: s.status === 'Sold' ? '2026-01-01T00:00:00.000Z' : null,
      status_source: held ? 'Crm' : 'Import',
      version: s.version ?? 1,
    };
  });
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    await database.sql`INSERT INTO chessboard.property_objects ${database.sql(chunk as never)}`;
  }
  // and crm's view of them, as its projection consumer would have it (DESIGN decision 8)
  await projectObjects(database, rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, projectId: r.project_id, status: r.status, version: r.version })));
  return rows.map((r) => r.id);
}

export interface ObjectRow {
  id: string;
  status: string;
  reserved_until: Date | null;
  booked_until: Date | null;
  hold_deal_id: string | null;
  hold_booking_id: string | null;
  sold_at: Date | null;
  status_source: string;
  status_changed_at: Date;
  updated_at: Date;
  version: number;
}

const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));

/** (drizzle makes the shared postgres.js client return timestamps as strings; they are turned into Dates here) */
export async function readObject(database: Database, id: string): Promise<ObjectRow> {
  const [row] = await database.sql<Record<string, unknown>[]>`SELECT * FROM chessboard.property_objects WHERE id = ${id}`;
  if (!row) return row as never;
  return {
    ...(row as unknown as ObjectRow),
    reserved_until: toDate(row.reserved_until), booked_until: toDate(row.booked_until), sold_at: toDate(row.sold_at),
    status_changed_at: toDate(row.status_changed_at)!, updated_at: toDate(row.updated_at)!,
  };
}

export interface OutboxEventRow {
  message_id: string;
  topic: string;
  aggregate_id: string;
  payload: AnyEnvelope & { payload: Record<string, unknown> };
}

export async function statusChangedEvents(database: Database, objectId?: string): Promise<OutboxEventRow[]> {
  return database.sql<OutboxEventRow[]>`
    SELECT message_id, topic, aggregate_id, payload FROM chessboard.outbox
    WHERE topic = 'pin.chessboard.property-object-status-changed.v1' ${objectId ? database.sql`AND aggregate_id = ${objectId}` : database.sql``}
    ORDER BY id`;
}

/** A crm envelope as the relay would publish it (validated with the shared contract). */
export function crmEnvelope<T extends CrmTopic>(
  topic: T,
  payload: CrmPayload<T>,
  opts: { messageId?: string; correlationId?: string; aggregateId?: string; occurredAt?: Date } = {},
): AnyEnvelope {
  const p = payload as { bookingId?: string | null; dealId: string; tenantId: string };
  return contracts[topic].parse({
    messageId: opts.messageId ?? randomUUID(),
    type: eventTypes[topic],
    contractVersion: 1,
    aggregateType: p.bookingId && !topic.includes('deal-') ? 'Booking' : 'Deal',
    aggregateId: opts.aggregateId ?? (topic.includes('deal-') ? p.dealId : p.bookingId),
    occurredAt: (opts.occurredAt ?? new Date()).toISOString(),
    tenantId: p.tenantId,
    correlationId: opts.correlationId ?? randomUUID(),
    causationId: null,
    payload,
  }) as AnyEnvelope;
}

export const consumed = (topic: CrmTopic, envelope: AnyEnvelope): ConsumedMessage => ({ topic, envelope, partition: 0, offset: '0' });

/** The booking of one test: builds its crm payloads with increasing bookingVersion. */
export function bookingOf(propertyObjectId: string, tenantId = TENANT, ids: { bookingId?: string; dealId?: string } = {}) {
  const bookingId = ids.bookingId ?? randomUUID();
  const dealId = ids.dealId ?? randomUUID();
  const base = { bookingId, dealId, propertyObjectId, tenantId };
  const iso = (d: Date) => d.toISOString();
  return {
    bookingId,
    dealId,
    created: (reserveExpiresAt: Date, v = 1): CrmPayload<'pin.crm.booking-created.v1'> => ({
      ...base, bookingVersion: v, programId: randomUUID(), status: 'Reserved', reserveExpiresAt: iso(reserveExpiresAt), createdAt: iso(new Date()),
    }),
    confirmed: (bookingExpiresAt: Date, v = 2): CrmPayload<'pin.crm.booking-confirmed.v1'> => ({
      ...base, bookingVersion: v, status: 'Booked', bookedAt: iso(new Date()), bookingExpiresAt: iso(bookingExpiresAt),
    }),
    extended: (bookingExpiresAt: Date, v = 3): CrmPayload<'pin.crm.booking-extended.v1'> => ({
      ...base, bookingVersion: v, previousBookingExpiresAt: iso(new Date()), bookingExpiresAt: iso(bookingExpiresAt),
    }),
    expired: (v = 2, phase: 'Reserve' | 'Booking' = 'Reserve'): CrmPayload<'pin.crm.booking-expired.v1'> => ({
      ...base, bookingVersion: v, phase, status: phase === 'Reserve' ? 'ReserveExpired' : 'BookingExpired', expiredAt: iso(new Date()), deadline: iso(new Date()),
    }),
    cancelled: (v = 2, fromStatus: 'Reserved' | 'AwaitingPayment' | 'Booked' = 'Reserved'): CrmPayload<'pin.crm.booking-cancelled.v1'> => ({
      ...base, bookingVersion: v, fromStatus, reason: 'client changed their mind', cancelledAt: iso(new Date()),
    }),
    dealCancelled: (v = 2): CrmPayload<'pin.crm.deal-cancelled.v1'> => ({
      dealId, tenantId, bookingId, propertyObjectId, bookingVersion: v, reason: 'deal cancelled', cancelledAt: iso(new Date()),
    }),
    saleStarted: (startedAt: Date, v = 3): CrmPayload<'pin.crm.deal-sale-started.v1'> => ({
      dealId, tenantId, bookingId, propertyObjectId, bookingVersion: v, startedAt: iso(startedAt),
    }),
  };
}

export function jobContext(deps: { database: Database; env: Env; logger: Logger }, opts: { signal?: AbortSignal; runId?: string } = {}): JobContext {
  const runId = opts.runId ?? randomUUID();
  return {
    database: deps.database,
    env: deps.env,
    // as runJobCycle does: every line of the cycle carries its runId
    logger: deps.logger.child({ runId }),
    runId,
    signal: opts.signal ?? new AbortController().signal,
    trigger: 'manual',
    kafka: createKafka(deps.env),
  };
}

/** Polls `check` until it returns a truthy value (or fails after `timeoutMs`). */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
