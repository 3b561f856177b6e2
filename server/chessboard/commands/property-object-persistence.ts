import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { writeOutbox } from '../../platform/outbox/write';
import { TOPICS } from '../../platform/kafka/topics';
import { PROPERTY_OBJECT_ERRORS, type PropertyObjectState } from '../property-object';
import { crmBookingVersions, projects, propertyObjects, propertyObjectStatusHistory } from '../schema';

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

const lockedColumns = {
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
 * selects with SKIP LOCKED, so it passes over a row held here instead of racing it.
 */
export async function lockPropertyObject(tx: Tx, id: string): Promise<LockedPropertyObject | undefined> {
  const [row] = await tx.select(lockedColumns).from(propertyObjects).where(eq(propertyObjects.id, id)).for('update');
  return row;
}

export const stateOf = (o: LockedPropertyObject): PropertyObjectState => ({
  status: o.status, reservedUntil: o.reservedUntil, bookedUntil: o.bookedUntil, holdDealId: o.holdDealId,
  holdBookingId: o.holdBookingId, soldAt: o.soldAt, statusSource: o.statusSource, statusChangedAt: o.statusChangedAt,
  updatedAt: o.updatedAt, version: o.version,
});

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
}

/**
 * Persists one transition computed by property-object.ts. The UPDATE is guarded by the version read
 * (optimistic check): if the row changed meanwhile the transition is refused with VERSION_CONFLICT.
 * Returns the messageId of the pin.chessboard.property-object-status-changed.v1 event.
 */
export async function persistStatusTransition(tx: Tx, w: StatusTransitionWrite): Promise<{ messageId: string }> {
  const { object, from, to } = w;
  const updated = await tx
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
    .returning({ id: propertyObjects.id });
  if (updated.length === 0) {
    throw new AppError(PROPERTY_OBJECT_ERRORS.VERSION_CONFLICT, 'CONFLICT', `property object ${object.id} changed concurrently (expected version ${from.version})`);
  }

  const messageId = await writeOutbox(tx, 'chessboard', {
    topic: TOPICS.propertyObjectStatusChanged,
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
  });

  await tx.insert(propertyObjectStatusHistory).values({
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
  });

  if (w.requestRecalc !== false) await requestProjectAggregatesRecalc(tx, [object.projectId], to.updatedAt);
  return { messageId };
}

/**
 * ProjectAggregatesRecalcRequested: marks the projects for the debounced project-aggregates-recalc job
 * (the earliest pending request wins). The UPDATE always takes the project row lock, even when a request
 * is already pending: the recalc job counts under that lock, so a transition committed after its count
 * re-requests instead of being lost. Projects are locked in id order so that two batches touching the
 * same projects cannot deadlock.
 */
export async function requestProjectAggregatesRecalc(tx: Tx, projectIds: Iterable<string>, at: Date): Promise<void> {
  for (const id of [...new Set(projectIds)].sort()) {
    await tx
      .update(projects)
      .set({ aggregatesRecalcRequestedAt: sql`coalesce(${projects.aggregatesRecalcRequestedAt}, ${at.toISOString()}::timestamptz)` })
      .where(eq(projects.id, id));
  }
}

/**
 * DESIGN decision 3: per CRM booking, the highest bookingVersion applied (a null version keeps the
 * stored one); `released` is sticky — it is the tombstone a release leaves, also when it arrives
 * before its create, so that a late create does not re-hold the object.
 */
export async function recordCrmBookingVersion(
  tx: Tx,
  r: { bookingId: string; propertyObjectId: string; dealId: string; version: number | null; released: boolean; at: Date },
): Promise<void> {
  await tx
    .insert(crmBookingVersions)
    .values({ bookingId: r.bookingId, propertyObjectId: r.propertyObjectId, dealId: r.dealId, appliedVersion: r.version ?? 0, released: r.released, updatedAt: r.at })
    .onConflictDoUpdate({
      target: crmBookingVersions.bookingId,
      set: {
        appliedVersion: sql`greatest(${crmBookingVersions.appliedVersion}, excluded.applied_version)`,
        released: sql`${crmBookingVersions.released} OR excluded.released`,
        updatedAt: r.at,
      },
    });
}
