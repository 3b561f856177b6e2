import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { uuidArray, type Tx } from '../platform/db';
import { AppError } from '../platform/errors';
import { writeOutbox, writeOutboxMany, type OutboxEvent } from '../platform/outbox/write';
import { TOPICS } from '../platform/kafka/topics';
import { PROPERTY_OBJECT_ERRORS, type PropertyObjectState } from './property-object';
import { crmBookingVersions, projects, propertyObjects, propertyObjectStatusHistory } from './schema';

/**
 * Loading and persisting property-object transitions, shared by the commands, the CRM consumer and
 * the hold-expiration job: every transition writes the row, its status-changed event, a status-history
 * row and a project aggregates recalc request in the caller's transaction.
 */

export interface PropertyObjectIdentity {
  id: string;
  tenantId: string;
  projectId: string;
  buildingId: string;
}

export type LockedPropertyObject = PropertyObjectIdentity & PropertyObjectState;

/** The columns of a property object a status transition reads and writes (a LockedPropertyObject). */
export const lockedColumns = {
  id: propertyObjects.id,
  tenantId: propertyObjects.tenantId,
  projectId: propertyObjects.projectId,
  buildingId: propertyObjects.buildingId,
  status: propertyObjects.status,
  reservedUntil: propertyObjects.reservedUntil,
  bookedUntil: propertyObjects.bookedUntil,
  holdDealId: propertyObjects.holdDealId,
  holdBookingId: propertyObjects.holdBookingId,
  soldAt: propertyObjects.soldAt,
  statusSource: propertyObjects.statusSource,
  statusChangedAt: propertyObjects.statusChangedAt,
  updatedAt: propertyObjects.updatedAt,
  version: propertyObjects.version,
};

/**
 * SELECT … FOR UPDATE (waiting): the writer that owns the row until commit. The hold-expiration job
 * selects with SKIP LOCKED, so it passes over a row held here instead of racing it. With `tenantId` the
 * tenant is in the WHERE: another tenant's row is filtered out before the lock, so it is neither locked
 * nor waited for (a person's command never queues behind, or holds, a row it may not see).
 */
export async function lockPropertyObject(tx: Tx, id: string, tenantId?: string): Promise<LockedPropertyObject | undefined> {
  const [row] = await tx.select(lockedColumns).from(propertyObjects)
    .where(tenantId === undefined ? eq(propertyObjects.id, id) : and(eq(propertyObjects.id, id), eq(propertyObjects.tenantId, tenantId)))
    .for('update');
  return row;
}

export interface StatusTransitionWrite {
  object: PropertyObjectIdentity;
  from: PropertyObjectState;
  to: PropertyObjectState;
  /** of the command / consumed message / job run */
  correlationId: string;
  /** the messageId of the consumed CRM event, if any */
  causationId?: string | null;
  bookingId?: string | null;
  dealId?: string | null;
  actorId?: string | null;
  reason?: string | null;
  /** false: the caller requests the recalc itself (the job does it once per project per batch) */
  requestRecalc?: boolean;
  /** the status-changed event's messageId, when the caller needs it before the write (default: a new uuid) */
  messageId?: string;
}

/**
 * Persists one transition computed by property-object.ts. The UPDATE is guarded by the version read
 * (optimistic check): if the row changed meanwhile the transition is refused with VERSION_CONFLICT.
 * The writes do not depend on each other, so they are sent together (postgres.js pipelines them on the
 * transaction's connection: one round trip instead of five); a VERSION_CONFLICT is thrown once they are
 * done, and the caller's transaction (or savepoint) rolls all of them back.
 * Returns the messageId of the pin.chessboard.property-object-status-changed.v1 event.
 */
export async function persistStatusTransition(tx: Tx, w: StatusTransitionWrite): Promise<{ messageId: string }> {
  const { object, from, to } = w;
  const messageId = w.messageId ?? randomUUID();
  const updated = tx
    .update(propertyObjects)
    .set({
      status: to.status,
      reservedUntil: to.reservedUntil,
      bookedUntil: to.bookedUntil,
      holdDealId: to.holdDealId,
      holdBookingId: to.holdBookingId,
      soldAt: to.soldAt,
      statusSource: to.statusSource,
      statusChangedAt: to.statusChangedAt,
      updatedAt: to.updatedAt,
      version: to.version,
    })
    .where(and(eq(propertyObjects.id, object.id), eq(propertyObjects.version, from.version)))
    .returning({ id: propertyObjects.id })
    .then((rows) => rows);
  const evented = writeOutbox(tx, 'chessboard', statusChangedEvent({ ...w, messageId }));
  const recorded = tx.insert(propertyObjectStatusHistory).values(historyRow(w, messageId)).then(() => undefined);
  const recalc = w.requestRecalc !== false ? requestProjectAggregatesRecalc(tx, [object.projectId], to.updatedAt) : undefined;
  const [rows] = await Promise.all([updated, evented, recorded, recalc]);
  if (rows.length === 0) {
    throw new AppError(PROPERTY_OBJECT_ERRORS.VERSION_CONFLICT, 'CONFLICT', `property object ${object.id} changed concurrently (expected version ${from.version})`);
  }
  return { messageId };
}

/** The pin.chessboard.property-object-status-changed.v1 event of a transition. */
function statusChangedEvent(w: StatusTransitionWrite): OutboxEvent<typeof TOPICS.propertyObjectStatusChanged> {
  const { object, from, to } = w;
  return {
    topic: TOPICS.propertyObjectStatusChanged,
    messageId: w.messageId,
    aggregateType: 'PropertyObject',
    aggregateId: object.id,
    tenantId: object.tenantId,
    correlationId: w.correlationId,
    causationId: w.causationId ?? null,
    occurredAt: to.updatedAt,
    payload: {
      propertyObjectId: object.id,
      tenantId: object.tenantId,
      projectId: object.projectId,
      buildingId: object.buildingId,
      fromStatus: from.status,
      toStatus: to.status,
      statusSource: to.statusSource,
      reservedUntil: to.reservedUntil?.toISOString() ?? null,
      bookedUntil: to.bookedUntil?.toISOString() ?? null,
      holdDealId: to.holdDealId,
      soldAt: to.soldAt?.toISOString() ?? null,
      statusChangedAt: to.statusChangedAt.toISOString(),
      version: to.version,
    },
  };
}

function historyRow(w: StatusTransitionWrite, messageId: string): typeof propertyObjectStatusHistory.$inferInsert {
  const { object, from, to } = w;
  return {
    propertyObjectId: object.id,
    tenantId: object.tenantId,
    fromStatus: from.status,
    toStatus: to.status,
    statusSource: to.statusSource,
    at: to.updatedAt,
    bookingId: w.bookingId ?? null,
    dealId: w.dealId ?? null,
    actorId: w.actorId ?? null,
    reason: w.reason ?? null,
    causationId: w.causationId ?? null,
    messageId,
    version: to.version,
  };
}

/** One object's next state as it travels in a jsonb parameter (snake_case: the column names), with the version it was read at. */
export interface TransitionJsonRow {
  id: string; from_version: number; status: string; reserved_until: string | null; booked_until: string | null; hold_deal_id: string | null;
  hold_booking_id: string | null; sold_at: string | null; status_source: string; status_changed_at: string; updated_at: string; version: number;
}

/** One status-history row as it travels in a jsonb parameter. */
export interface HistoryJsonRow {
  property_object_id: string; tenant_id: string; from_status: string; to_status: string; status_source: string; at: string;
  booking_id: string | null; deal_id: string | null; actor_id: string | null; reason: string | null; causation_id: string | null;
  message_id: string; version: number;
}

/**
 * The rows a batch of transitions writes, in the order of `writes`: each object's next state (under the
 * version read), its history row and its status-changed event (not yet validated: the outbox writer
 * validates each envelope). Shared by persistStatusTransitions and the hold-expiration job's
 * one-statement phase, so both write the same rows.
 */
export function statusTransitionRows(writes: StatusTransitionWrite[]): {
  messageIds: string[]; next: TransitionJsonRow[]; history: HistoryJsonRow[]; events: OutboxEvent<typeof TOPICS.propertyObjectStatusChanged>[];
} {
  const identified = writes.map((w) => ({ ...w, messageId: w.messageId ?? randomUUID() }));
  const next = identified.map(({ object, from, to }) => ({
    id: object.id, from_version: from.version, status: to.status, reserved_until: to.reservedUntil?.toISOString() ?? null,
    booked_until: to.bookedUntil?.toISOString() ?? null, hold_deal_id: to.holdDealId, hold_booking_id: to.holdBookingId,
    sold_at: to.soldAt?.toISOString() ?? null, status_source: to.statusSource, status_changed_at: to.statusChangedAt.toISOString(),
    updated_at: to.updatedAt.toISOString(), version: to.version,
  }));
  const history = identified.map((w) => {
    const h = historyRow(w, w.messageId);
    return {
      property_object_id: h.propertyObjectId, tenant_id: h.tenantId, from_status: h.fromStatus, to_status: h.toStatus, status_source: h.statusSource,
      at: h.at.toISOString(), booking_id: h.bookingId ?? null, deal_id: h.dealId ?? null, actor_id: h.actorId ?? null, reason: h.reason ?? null,
      causation_id: h.causationId ?? null, message_id: w.messageId, version: h.version,
    };
  });
  return { messageIds: identified.map((w) => w.messageId), next, history, events: identified.map(statusChangedEvent) };
}

/**
 * `persistStatusTransition` for many objects at once (the hold-expiration job's batch): the same rows
 * — each object's next state under the same optimistic version check, its status-changed event, its
 * history row — as one UPDATE, one outbox INSERT (+ NOTIFY) and one history INSERT, whatever the batch
 * size, instead of four round trips per object. The rows travel as jsonb parameters (building a VALUES
 * list of hundreds of rows in drizzle costs more than the statement), and the statements, independent
 * of each other, are sent back to back on the transaction's connection (postgres.js pipelines them).
 * All or nothing: if any object's version moved, VERSION_CONFLICT is thrown and the caller (which holds
 * the rows FOR UPDATE, so this means a writer that ignores the locks) rolls back its savepoint.
 * Returns the messageIds in the order of `writes`. Recalc requests are the caller's.
 */
export async function persistStatusTransitions(tx: Tx, writes: StatusTransitionWrite[]): Promise<{ messageIds: string[] }> {
  if (writes.length === 0) return { messageIds: [] };
  const { messageIds, next, history, events: identifiedEvents } = statusTransitionRows(writes);
  const updated = tx.execute<{ id: string }>(sql`
    UPDATE ${propertyObjects} AS p SET
      status = v.status, reserved_until = v.reserved_until, booked_until = v.booked_until, hold_deal_id = v.hold_deal_id,
      hold_booking_id = v.hold_booking_id, sold_at = v.sold_at, status_source = v.status_source,
      status_changed_at = v.status_changed_at, updated_at = v.updated_at, version = v.version
    FROM jsonb_to_recordset(${JSON.stringify(next)}::jsonb) AS v(
      id uuid, from_version integer, status text, reserved_until timestamptz, booked_until timestamptz, hold_deal_id uuid,
      hold_booking_id uuid, sold_at timestamptz, status_source text, status_changed_at timestamptz, updated_at timestamptz, version integer)
    WHERE p.id = v.id AND p.version = v.from_version
    RETURNING p.id`).then((rows) => rows);
  const events = writeOutboxMany(tx, 'chessboard', identifiedEvents);
  const historyWritten = tx.execute(sql`
    INSERT INTO ${propertyObjectStatusHistory} (property_object_id, tenant_id, from_status, to_status, status_source, at, booking_id, deal_id,
      actor_id, reason, causation_id, message_id, version)
    SELECT h.property_object_id, h.tenant_id, h.from_status, h.to_status, h.status_source, h.at, h.booking_id, h.deal_id, h.actor_id, h.reason,
      h.causation_id, h.message_id, h.version
    FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(history)}::jsonb) AS (property_object_id uuid, tenant_id uuid, from_status text,
      to_status text, status_source text, at timestamptz, booking_id uuid, deal_id uuid, actor_id text, reason text, causation_id uuid,
      message_id uuid, version integer)) WITH ORDINALITY
      AS h(property_object_id, tenant_id, from_status, to_status, status_source, at, booking_id, deal_id, actor_id, reason, causation_id,
        message_id, version, ord)
    ORDER BY h.ord`).then(() => undefined);
  const [rows] = await Promise.all([updated, events, historyWritten]);
  if (rows.length !== writes.length) {
    const moved = writes.filter((w) => !rows.some((u) => u.id === w.object.id)).map((w) => w.object.id);
    throw new AppError(PROPERTY_OBJECT_ERRORS.VERSION_CONFLICT, 'CONFLICT', `property objects ${moved.join(', ')} changed concurrently`);
  }
  return { messageIds };
}

/**
 * ProjectAggregatesRecalcRequested: marks the projects for the debounced project-aggregates-recalc job
 * (the earliest pending request wins). The UPDATE always takes the project row lock, even when a request
 * is already pending: the recalc job counts under that lock, so a transition committed after its count
 * re-requests instead of being lost. Projects are locked in id order so that two batches touching the
 * same projects cannot deadlock.
 */
export async function requestProjectAggregatesRecalc(tx: Tx, projectIds: Iterable<string>, at: Date): Promise<void> {
  const ids = [...new Set(projectIds)].sort();
  if (ids.length === 0) return;
  // one statement for the whole batch; the subquery takes the row locks in id order (ORDER BY … FOR UPDATE)
  await tx.execute(sql`
    UPDATE ${projects} SET aggregates_recalc_requested_at = coalesce(aggregates_recalc_requested_at, ${at.toISOString()}::timestamptz)
    WHERE id IN (SELECT id FROM ${projects} WHERE id = ANY(${uuidArray(ids)}) ORDER BY id FOR UPDATE)`);
}

/**
 * DESIGN decision 3: per CRM booking, the highest bookingVersion applied (a null version keeps the
 * stored one); `released` is sticky — it is the tombstone a release leaves, also when it arrives
 * before its create, so that a late create does not re-hold the object.
 */
export async function recordCrmBookingVersion(
  tx: Tx,
  r: { bookingId: string; propertyObjectId: string; dealId: string; version: number | null; released: boolean; at: Date; eventAt?: Date | null; bookingCreatedAt?: Date | null },
): Promise<void> {
  await tx
    .insert(crmBookingVersions)
    .values({
      bookingId: r.bookingId, propertyObjectId: r.propertyObjectId, dealId: r.dealId, appliedVersion: r.version ?? 0, released: r.released,
      lastEventAt: r.eventAt ?? null, bookingCreatedAt: r.bookingCreatedAt ?? null, updatedAt: r.at,
    })
    .onConflictDoUpdate({
      target: crmBookingVersions.bookingId,
      set: {
        appliedVersion: sql`greatest(${crmBookingVersions.appliedVersion}, excluded.applied_version)`,
        released: sql`${crmBookingVersions.released} OR excluded.released`,
        // greatest() ignores NULLs: a release recorded without a time keeps the known one
        lastEventAt: sql`greatest(${crmBookingVersions.lastEventAt}, excluded.last_event_at)`,
        // a booking has one creation time; a write that does not know it keeps the recorded one
        bookingCreatedAt: sql`coalesce(${crmBookingVersions.bookingCreatedAt}, excluded.booking_created_at)`,
        updatedAt: r.at,
      },
    });
}
