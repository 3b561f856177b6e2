import { and, eq, isNull, or, sql, type AnyColumn } from 'drizzle-orm';
import type { ChessboardPayload } from '../contracts/chessboard';
import type { Tx } from '../platform/db';
import type { TOPICS } from '../platform/kafka/topics';
import { decideChange, decideDelete, type ObjectChange, type PropertyObjectView, type ViewDecision } from './property-object-view';
import { crmPropertyObjects } from './schema';

/**
 * Commands of crm's property object projection (DESIGN decision 8): each applies one chessboard event
 * to crm.property_objects inside the consumer's transaction. The row is locked first (FOR UPDATE), so
 * the decision is taken on the state that is written.
 */

type Upserted = ChessboardPayload<typeof TOPICS.propertyObjectUpserted>;
type StatusChanged = ChessboardPayload<typeof TOPICS.propertyObjectStatusChanged>;
type Deleted = ChessboardPayload<typeof TOPICS.propertyObjectDeleted>;

/** A concurrent insert of the same id (another consumer instance): the runner retries the transaction. */
class ConcurrentViewInsert extends Error {
  constructor(id: string) {
    super(`crm.property_objects ${id} was inserted concurrently; retrying`);
    this.name = 'ConcurrentViewInsert';
  }
}

async function lockView(tx: Tx, id: string): Promise<PropertyObjectView | null> {
  const [row] = await tx
    .select({
      tenantId: crmPropertyObjects.tenantId, projectId: crmPropertyObjects.projectId, status: crmPropertyObjects.status,
      deleted: crmPropertyObjects.deleted, sourceVersion: crmPropertyObjects.sourceVersion,
      sourceChangedAt: crmPropertyObjects.sourceChangedAt, deletedAt: crmPropertyObjects.deletedAt,
    })
    .from(crmPropertyObjects)
    .where(eq(crmPropertyObjects.id, id))
    .for('update');
  return row ?? null;
}

async function write(tx: Tx, id: string, existed: boolean, decision: ViewDecision): Promise<ViewDecision> {
  if (decision.kind !== 'write') return decision;
  const values = { ...decision.view, updatedAt: new Date() };
  if (existed) {
    await tx.update(crmPropertyObjects).set(values).where(eq(crmPropertyObjects.id, id));
  } else {
    const inserted = await tx.insert(crmPropertyObjects).values({ id, ...values }).onConflictDoNothing().returning({ id: crmPropertyObjects.id });
    if (inserted.length === 0) throw new ConcurrentViewInsert(id);
  }
  return decision;
}

async function applyChange(tx: Tx, id: string, change: ObjectChange): Promise<ViewDecision> {
  const current = await lockView(tx, id);
  return write(tx, id, current !== null, decideChange(current, change));
}

/**
 * The price, floor and room count go with the upsert that is applied. A stale upsert still fills what the
 * view does not have yet (a status change can create the row first), so a percentage reward has a price
 * to use and the reports a floor and room count. An upsert of exactly the view's version (chessboard's
 * snapshot) carries the values at that version: it corrects a price lost when a status change overtook
 * the upsert that changed it.
 */
export async function applyObjectUpserted(tx: Tx, p: Upserted): Promise<ViewDecision> {
  const decision = await applyChange(tx, p.propertyObjectId, { tenantId: p.tenantId, projectId: p.projectId, status: p.status, version: p.version, at: new Date(p.updatedAt) });
  const id = eq(crmPropertyObjects.id, p.propertyObjectId);
  if (decision.kind === 'write') {
    await tx.update(crmPropertyObjects).set({ price: p.price, floor: p.floor, rooms: p.rooms }).where(id);
    return decision;
  }
  if (decision.reason === 'stale') {
    await tx.update(crmPropertyObjects).set({ price: p.price, floor: p.floor, rooms: p.rooms })
      .where(and(id, eq(crmPropertyObjects.sourceVersion, p.version)));
  }
  const fill = <T>(column: AnyColumn, value: T) => sql`coalesce(${column}, ${value})`;
  await tx.update(crmPropertyObjects)
    .set({ price: fill(crmPropertyObjects.price, p.price), floor: fill(crmPropertyObjects.floor, p.floor), rooms: fill(crmPropertyObjects.rooms, p.rooms) })
    .where(and(id, or(isNull(crmPropertyObjects.price), isNull(crmPropertyObjects.floor), isNull(crmPropertyObjects.rooms))));
  return decision;
}

export function applyObjectStatusChanged(tx: Tx, p: StatusChanged): Promise<ViewDecision> {
  return applyChange(tx, p.propertyObjectId, { tenantId: p.tenantId, projectId: p.projectId, status: p.toStatus, version: p.version, at: new Date(p.statusChangedAt) });
}

export async function applyObjectDeleted(tx: Tx, p: Deleted): Promise<ViewDecision> {
  const current = await lockView(tx, p.propertyObjectId);
  return write(tx, p.propertyObjectId, current !== null, decideDelete(current, { tenantId: p.tenantId, projectId: p.projectId, at: new Date(p.deletedAt) }));
}
