import { and, eq, ne, sql } from 'drizzle-orm';
import type { ChessboardPayload } from '../contracts/chessboard';
import { TOPICS } from '../platform/kafka/topics';
import type { Tx } from '../platform/db';
import {
  cardStatusForObject, decideDelist, decideStatusChange, decideUpsert,
  type CardDecision, type CardSourceState, type CardStatus,
} from './card';
import { pendingStatusChanges, projectCards, propertyObjectCards } from './schema';

/**
 * Commands of the card projection: each applies one chessboard event to the catalog cards inside the
 * consumer's transaction. The card row is locked first (FOR UPDATE), so the decision is taken on the
 * state that will be written — and a retention batch that already locked the row is waited for: if it
 * deletes the card, the upsert then creates a fresh card with the same id (spec: race with restoration).
 */

export interface ProjectionOutcome {
  decision: CardDecision;
  /** INV-5: object cards delisted together with their project */
  cascaded?: number;
}

type PropertyObjectUpserted = ChessboardPayload<typeof TOPICS.propertyObjectUpserted>;
type PropertyObjectDeleted = ChessboardPayload<typeof TOPICS.propertyObjectDeleted>;
type PropertyObjectStatusChanged = ChessboardPayload<typeof TOPICS.propertyObjectStatusChanged>;
type ProjectUpserted = ChessboardPayload<typeof TOPICS.projectUpserted>;
type ProjectDeleted = ChessboardPayload<typeof TOPICS.projectDeleted>;

/** The transaction's time: every row changed by one event gets the same updated_at (INV-5). */
async function transactionNow(tx: Tx): Promise<Date> {
  const [row] = await tx.execute<{ now: Date | string }>(sql`SELECT now() AS now`);
  return new Date(row.now);
}

/** A concurrent insert of the same id (another instance): the transaction is retried by the runner. */
class ConcurrentCardInsert extends Error {
  constructor(id: string) {
    super(`card ${id} was inserted concurrently; retrying`);
    this.name = 'ConcurrentCardInsert';
  }
}

/**
 * Serialises every event of one object across the consumer's concurrent partitions: FOR UPDATE locks
 * nothing while the card does not exist, so an upsert and a status change of a new object (two topics,
 * two transactions) each missed the other's uncommitted row — the change was parked in
 * pending_status_changes after the upsert had looked there, and the card kept the older status (found
 * under load by the replay fault scenario). The statements after this lock see the other's commit.
 */
async function lockPropertyObjectCard(tx: Tx, id: string): Promise<CardSourceState | null> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`catalog.property-object-card:${id}`}, 0))`);
  const [row] = await tx
    .select({ status: propertyObjectCards.status, sourceVersion: propertyObjectCards.sourceVersion, sourceUpdatedAt: propertyObjectCards.sourceUpdatedAt })
    .from(propertyObjectCards)
    .where(eq(propertyObjectCards.id, id))
    .for('update');
  return row ?? null;
}

type CardTable = typeof propertyObjectCards | typeof projectCards;

/**
 * An upsert's write: a new card (created_at = updated_at) or the fields over the existing one. A new
 * card that another instance inserted first is a ConcurrentCardInsert: the retried transaction then
 * finds the card, locks it and decides again.
 */
async function writeUpsertedCard<T extends CardTable>(
  tx: Tx, table: T, id: string, kind: 'insert' | 'update', fields: Omit<T['$inferInsert'], 'id' | 'createdAt'>, now: Date,
): Promise<void> {
  const card = table as CardTable;
  if (kind === 'insert') {
    const inserted = await tx.insert(card).values({ id, ...fields, createdAt: now } as T['$inferInsert'])
      .onConflictDoNothing().returning({ id: card.id });
    if (inserted.length === 0) throw new ConcurrentCardInsert(id);
  } else {
    await tx.update(card).set(fields).where(eq(card.id, id));
  }
}

async function lockProjectCard(tx: Tx, id: string): Promise<CardSourceState | null> {
  const [row] = await tx
    .select({ status: projectCards.status, sourceVersion: projectCards.sourceVersion, sourceUpdatedAt: projectCards.sourceUpdatedAt })
    .from(projectCards)
    .where(eq(projectCards.id, id))
    .for('update');
  return row ?? null;
}

/** PropertyObjectUpserted → Published (Hidden object → Hidden card); restores a Delisted card (INV-7 exception). */
export async function applyPropertyObjectUpserted(tx: Tx, p: PropertyObjectUpserted): Promise<ProjectionOutcome> {
  const card = await lockPropertyObjectCard(tx, p.propertyObjectId);
  const decision = decideUpsert(card, { version: p.version, at: new Date(p.updatedAt) }, cardStatusForObject(p.status));
  if (decision.kind === 'no-op') return { decision };
  const now = await transactionNow(tx);
  const fields = {
    projectId: p.projectId,
    buildingId: p.buildingId,
    // the catalog is platform-level: the source tenant is the developer that owns the object
    developerId: p.tenantId,
    number: p.number,
    floor: p.floor,
    rooms: p.rooms,
    area: p.area,
    price: p.price,
    saleStatus: p.status,
    status: decision.status,
    sourceVersion: p.version,
    sourceUpdatedAt: new Date(p.updatedAt),
    updatedAt: now,
  };
  await writeUpsertedCard(tx, propertyObjectCards, p.propertyObjectId, decision.kind, fields, now);
  // a status change that overtook this upsert (pending_status_changes) is applied now if it is newer
  const [pending] = await tx.delete(pendingStatusChanges).where(eq(pendingStatusChanges.propertyObjectId, p.propertyObjectId)).returning();
  if (pending) {
    const late = decideStatusChange(
      { status: decision.status, sourceVersion: p.version, sourceUpdatedAt: new Date(p.updatedAt) },
      { version: pending.sourceVersion, at: pending.statusChangedAt },
      pending.toStatus as PropertyObjectStatusChanged['toStatus'],
    );
    if (late.kind === 'update') {
      await tx.update(propertyObjectCards).set({
        saleStatus: pending.toStatus, status: late.status, sourceVersion: pending.sourceVersion, sourceUpdatedAt: pending.statusChangedAt, updatedAt: now,
      }).where(eq(propertyObjectCards.id, p.propertyObjectId));
    }
  }
  return { decision };
}

/** PropertyObjectStatusChanged → the card's sale status (and Hidden ⇄ Published). */
export async function applyPropertyObjectStatusChanged(tx: Tx, p: PropertyObjectStatusChanged): Promise<ProjectionOutcome> {
  const card = await lockPropertyObjectCard(tx, p.propertyObjectId);
  const decision = decideStatusChange(card, { version: p.version, at: new Date(p.statusChangedAt) }, p.toStatus);
  if (!card) {
    // no card yet: its creating upsert is still on its way (another topic) — keep the newest change for it
    const change = { propertyObjectId: p.propertyObjectId, toStatus: p.toStatus, sourceVersion: p.version, statusChangedAt: new Date(p.statusChangedAt) };
    await tx.insert(pendingStatusChanges).values(change).onConflictDoUpdate({
      target: pendingStatusChanges.propertyObjectId,
      set: { toStatus: change.toStatus, sourceVersion: change.sourceVersion, statusChangedAt: change.statusChangedAt, receivedAt: sql`now()` },
      setWhere: sql`${pendingStatusChanges.sourceVersion} < ${change.sourceVersion}`,
    });
  }
  if (decision.kind !== 'update') return { decision };
  const now = await transactionNow(tx);
  await tx.update(propertyObjectCards).set({
    saleStatus: p.toStatus,
    status: decision.status,
    sourceVersion: p.version,
    sourceUpdatedAt: new Date(p.statusChangedAt),
    updatedAt: now,
  }).where(eq(propertyObjectCards.id, p.propertyObjectId));
  return { decision };
}

/** PropertyObjectDeleted → Delisted (its updated_at starts the retention clock). */
export async function applyPropertyObjectDeleted(tx: Tx, p: PropertyObjectDeleted): Promise<ProjectionOutcome> {
  const card = await lockPropertyObjectCard(tx, p.propertyObjectId);
  const deletedAt = new Date(p.deletedAt);
  const decision = decideDelist(card, deletedAt);
  if (decision.kind !== 'update') return { decision };
  const now = await transactionNow(tx);
  await tx.update(propertyObjectCards)
    .set({ status: 'Delisted', sourceUpdatedAt: deletedAt, updatedAt: now })
    .where(eq(propertyObjectCards.id, p.propertyObjectId));
  return { decision };
}

/** ProjectUpserted → Published project card; restores a Delisted one. Object cards follow their own upserts. */
export async function applyProjectUpserted(tx: Tx, p: ProjectUpserted): Promise<ProjectionOutcome> {
  const card = await lockProjectCard(tx, p.projectId);
  const decision = decideUpsert(card, { version: p.version, at: new Date(p.updatedAt) }, 'Published');
  if (decision.kind === 'no-op') return { decision };
  const now = await transactionNow(tx);
  const fields = {
    developerId: p.tenantId,
    name: p.name,
    city: p.city,
    freeCount: p.propertyObjectsFreeCount,
    status: decision.status,
    sourceVersion: p.version,
    sourceUpdatedAt: new Date(p.updatedAt),
    updatedAt: now,
  };
  await writeUpsertedCard(tx, projectCards, p.projectId, decision.kind, fields, now);
  return { decision };
}

const DELISTED: CardStatus = 'Delisted';

/**
 * ProjectDeleted → the project card Delisted and, INV-5 CascadeHide, every not-yet-Delisted object card
 * of the project Delisted with the same updated_at — so the retention job removes the objects (phase A)
 * no later than their project (phase B). Already Delisted object cards are frozen (INV-7).
 */
export async function applyProjectDeleted(tx: Tx, p: ProjectDeleted): Promise<ProjectionOutcome> {
  const card = await lockProjectCard(tx, p.projectId);
  const deletedAt = new Date(p.deletedAt);
  const decision = decideDelist(card, deletedAt);
  if (decision.kind !== 'update') return { decision };
  const now = await transactionNow(tx);
  await tx.update(projectCards)
    .set({ status: 'Delisted', sourceUpdatedAt: deletedAt, updatedAt: now })
    .where(eq(projectCards.id, p.projectId));
  // cascade targets: the project's object cards that are not already Delisted (those stay frozen, INV-7)
  const cascaded = await tx.update(propertyObjectCards)
    .set({
      status: DELISTED,
      sourceUpdatedAt: sql`greatest(${propertyObjectCards.sourceUpdatedAt}, ${deletedAt.toISOString()}::timestamptz)`,
      updatedAt: now,
    })
    .where(and(eq(propertyObjectCards.projectId, p.projectId), ne(propertyObjectCards.status, DELISTED)))
    .returning({ id: propertyObjectCards.id });
  return { decision, cascaded: cascaded.length };
}
