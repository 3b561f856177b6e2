import { and, asc, eq, lt, notExists, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../platform/db';
import { isRemovable } from './card';
import {
  buildingDisplayOverrides, projectCards, propertyObjectCards, propertyObjectDisplayOverrides,
} from './schema';

/**
 * The delete commands of DelistedRetentionJob, one batch at a time inside the job's transaction.
 * Phase A = property object cards, phase B = project cards. Every delete is physical and by predicate
 * (Status = Delisted ∧ UpdatedAt < cutoff); nothing else in the catalog schema is touched
 * (developer_ranking_rules survive delisting so a restored card gets its ranking back).
 */

export type RetentionPhase = 'property_object' | 'project';
export const RETENTION_PHASES: readonly RetentionPhase[] = ['property_object', 'project'];

/** Status = Delisted ∧ UpdatedAt < cutoff, for the property object cards. */
export const removablePropertyObjectCard = (cutoff: Date) =>
  and(eq(propertyObjectCards.status, 'Delisted'), lt(propertyObjectCards.updatedAt, cutoff));

/**
 * Status = Delisted ∧ UpdatedAt < cutoff for project cards — and no object card of the project left.
 * INV-5 delists the objects with the project's updated_at, so phase A has removed them already; the
 * guard keeps the order "objects → project" even when an object card was skipped (locked by a
 * restoring upsert) or restored, so no object card ever points to a removed project card.
 */
export const removableProjectCard = (cutoff: Date) =>
  and(
    eq(projectCards.status, 'Delisted'),
    lt(projectCards.updatedAt, cutoff),
    notExists(sql`(SELECT 1 FROM ${propertyObjectCards} WHERE ${propertyObjectCards.projectId} = ${projectCards.id})`),
  );

export interface LockedBatch {
  ids: string[];
}

/**
 * Selects up to `limit` removable cards of the phase, oldest updated_at first, and locks them
 * (FOR UPDATE SKIP LOCKED): a row locked by another run or by a restoring upsert is left for later.
 */
export async function lockRemovableCards(tx: Tx, input: { phase: RetentionPhase; cutoff: Date; limit: number }): Promise<LockedBatch> {
  const rows = input.phase === 'property_object'
    ? await tx
      .select({ id: propertyObjectCards.id, status: propertyObjectCards.status, updatedAt: propertyObjectCards.updatedAt })
      .from(propertyObjectCards)
      .where(removablePropertyObjectCard(input.cutoff))
      .orderBy(asc(propertyObjectCards.updatedAt), asc(propertyObjectCards.id))
      .limit(input.limit)
      .for('update', { skipLocked: true })
    : await tx
      .select({ id: projectCards.id, status: projectCards.status, updatedAt: projectCards.updatedAt })
      .from(projectCards)
      .where(removableProjectCard(input.cutoff))
      .orderBy(asc(projectCards.updatedAt), asc(projectCards.id))
      .limit(input.limit)
      .for('update', { skipLocked: true });
  // the SQL predicate is the rule; re-checked on the locked rows so a predicate bug cannot delete a live card
  return { ids: rows.filter((r) => isRemovable(r, input.cutoff)).map((r) => r.id) };
}

export interface DeletedBatch {
  deletedCards: number;
  deletedOverrides: number;
}

/** A uuid[] literal: the batch's ids as ONE parameter (`= ANY(…)`) instead of a list of 2,000 parameters. */
const uuidArray = (ids: string[]) => sql`${`{${ids.join(',')}}`}::uuid[]`;

/**
 * Deletes the locked batch: first its display overrides (live and soft-deleted — their target is
 * gone), then the cards themselves, still under the removal predicate. The ids go as one array
 * parameter and only the deleted-row counts come back (an `IN` list of 2,000 parameters with
 * RETURNING of every id cost more than the deletes; found with `npm run bench -- delisted-retention`);
 * the two statements are sent together (postgres.js pipelines them on the transaction's connection).
 */
export async function deleteLockedCards(tx: Tx, input: { phase: RetentionPhase; ids: string[]; cutoff: Date }): Promise<DeletedBatch> {
  if (input.ids.length === 0) return { deletedCards: 0, deletedOverrides: 0 };
  const ids = uuidArray(input.ids);
  const [overrides, cards] = input.phase === 'property_object'
    ? await Promise.all([
      tx.delete(propertyObjectDisplayOverrides).where(sql`${propertyObjectDisplayOverrides.propertyObjectId} = ANY(${ids})`).then((r) => r.count),
      tx.delete(propertyObjectCards).where(and(sql`${propertyObjectCards.id} = ANY(${ids})`, removablePropertyObjectCard(input.cutoff))).then((r) => r.count),
    ])
    : await Promise.all([
      tx.delete(buildingDisplayOverrides).where(sql`${buildingDisplayOverrides.projectId} = ANY(${ids})`).then((r) => r.count),
      tx.delete(projectCards).where(and(sql`${projectCards.id} = ANY(${ids})`, removableProjectCard(input.cutoff))).then((r) => r.count),
    ]);
  return { deletedCards: cards, deletedOverrides: overrides };
}

/** True if a run with this cutoff would still find work (HasMore after a limit or a stop request). */
export async function hasRemovableCards(db: DbOrTx, cutoff: Date): Promise<boolean> {
  const [row] = await db.execute<{ more: boolean }>(sql`SELECT
    EXISTS (SELECT 1 FROM ${propertyObjectCards} WHERE ${removablePropertyObjectCard(cutoff)})
    OR EXISTS (SELECT 1 FROM ${projectCards} WHERE ${removableProjectCard(cutoff)}) AS more`);
  return row.more;
}
