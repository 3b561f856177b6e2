/**
 * crm's view of a property object (DESIGN decision 8): pure rules, no I/O.
 *
 * The view is fed by three chessboard topics (upserted, status-changed, deleted) that may overtake each
 * other, so each event is applied only when it is newer than what the view already reflects:
 * - an upsert or a status change carries chessboard's row version: applied when it is higher than the
 *   view's `sourceVersion` and happened after the last deletion (a re-created object starts at version 1
 *   again, so a pre-deletion event with a high version must not come back to life);
 * - a deletion (chessboard deletes the row; the event has no version) is applied when it happened at or
 *   after the last applied change; an object re-created later comes back with its next upsert.
 */

export type ObjectStatus = 'Free' | 'Reserved' | 'Booked' | 'Sold' | 'Hidden';

export interface PropertyObjectView {
  tenantId: string;
  projectId: string;
  status: ObjectStatus;
  deleted: boolean;
  sourceVersion: number;
  sourceChangedAt: Date;
  deletedAt: Date | null;
}

export interface ObjectChange {
  tenantId: string;
  projectId: string;
  status: ObjectStatus;
  version: number;
  at: Date;
}

export type ViewDecision =
  | { kind: 'write'; view: PropertyObjectView }
  | { kind: 'no-op'; reason: 'stale' | 'deleted-later' };

/** PropertyObjectUpserted / PropertyObjectStatusChanged. */
export function decideChange(current: PropertyObjectView | null, e: ObjectChange): ViewDecision {
  const next: PropertyObjectView = {
    tenantId: e.tenantId, projectId: e.projectId, status: e.status, deleted: false,
    sourceVersion: e.version, sourceChangedAt: e.at, deletedAt: current?.deletedAt ?? null,
  };
  if (!current) return { kind: 'write', view: next };
  if (current.deletedAt && e.at.getTime() <= current.deletedAt.getTime()) return { kind: 'no-op', reason: 'deleted-later' };
  // after a deletion the next change is the re-created object's, whatever its version
  if (!current.deleted && e.version <= current.sourceVersion) return { kind: 'no-op', reason: 'stale' };
  return { kind: 'write', view: next };
}

/** PropertyObjectDeleted. */
export function decideDelete(
  current: PropertyObjectView | null,
  e: { tenantId: string; projectId: string; at: Date },
): ViewDecision {
  if (!current) {
    // the deletion overtook the object's upsert: keep a tombstone so the late upsert stays stale
    return { kind: 'write', view: { tenantId: e.tenantId, projectId: e.projectId, status: 'Free', deleted: true, sourceVersion: 0, sourceChangedAt: e.at, deletedAt: e.at } };
  }
  if (current.deletedAt && current.deletedAt.getTime() >= e.at.getTime()) return { kind: 'no-op', reason: 'stale' };
  if (e.at.getTime() < current.sourceChangedAt.getTime()) return { kind: 'no-op', reason: 'stale' };
  return { kind: 'write', view: { ...current, deleted: true, deletedAt: e.at } };
}

/**
 * What CreateBooking may do with an object, as crm sees it. `not-found` is one answer for an unknown
 * id, another tenant's object and a deleted one (nobody learns what another tenant has).
 * Reserved/Booked stay bookable: a hold without an active crm booking is a lost release that
 * chessboard's hold take-over (DESIGN decision 7) moves; INV-BKG-001 guards crm's own bookings.
 */
export type Bookability = { kind: 'bookable' } | { kind: 'not-found' } | { kind: 'sold' } | { kind: 'hidden' };

export function bookability(view: Pick<PropertyObjectView, 'tenantId' | 'status' | 'deleted'> | null, dealTenantId: string): Bookability {
  if (!view || view.deleted || view.tenantId !== dealTenantId) return { kind: 'not-found' };
  if (view.status === 'Sold') return { kind: 'sold' };
  if (view.status === 'Hidden') return { kind: 'hidden' };
  return { kind: 'bookable' };
}
