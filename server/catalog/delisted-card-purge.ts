import { and, lt, notExists, sql } from 'drizzle-orm';
import { executePrepared, type DbOrTx, type Tx } from '../platform/db';
import { AppError } from '../platform/errors';
import { isRemovable, type CardStatus } from './card';
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

/**
 * Status = Delisted ∧ UpdatedAt < cutoff, for the property object cards. The status is a literal in the
 * SQL, not a parameter: the batch runs as a named prepared statement, and a generic plan with the status
 * as a parameter could not use the partial index on Delisted cards.
 */
export const removablePropertyObjectCard = (cutoff: Date) =>
  and(sql`${propertyObjectCards.status} = 'Delisted'`, lt(propertyObjectCards.updatedAt, cutoff));

/**
 * Status = Delisted ∧ UpdatedAt < cutoff for project cards — and no object card of the project left.
 * INV-2: property_object_cards.project_id → project_cards.id is a logical reference with no FK, so this
 * guard (not a cascade) is what keeps it whole. INV-5 delists the objects with the project's updated_at, so phase A has removed them already; the
 * guard keeps the order "objects → project" even when an object card was skipped (locked by a
 * restoring upsert) or restored, so no object card ever points to a removed project card.
 */
export const removableProjectCard = (cutoff: Date) =>
  and(
    sql`${projectCards.status} = 'Delisted'`,
    lt(projectCards.updatedAt, cutoff),
    notExists(sql`(SELECT 1 FROM ${propertyObjectCards} WHERE ${propertyObjectCards.projectId} = ${projectCards.id})`),
  );

export interface PurgedBatch {
  /** the cards of the batch (locked and deleted, not yet committed) */
  ids: string[];
  deletedOverrides: number;
}

/**
 * One batch of a phase as ONE statement: select up to `limit` removable cards, oldest updated_at first,
 * under row locks (FOR UPDATE SKIP LOCKED: a row locked by another run or by a restoring upsert is left
 * for later), delete their display overrides (live and soft-deleted — their target is gone), then the
 * cards. The spec's order and predicate; one round trip instead of a locking SELECT that ships the
 * batch back and two DELETEs that look the same rows up again (`npm run bench -- delisted-retention`).
 *
 * The guard: the domain rule (card.ts `isRemovable`) is checked on what the DELETE actually removed,
 * and if the SQL predicate ever let a live card through, the call throws and the caller's transaction
 * rolls the whole batch back — nothing live is ever removed. The deleted cards come back grouped by
 * status — per status its count and its newest updated_at, with the batch's ids as one comma-separated
 * text — and the rule is checked on each status's newest card: the rule is Status = Delisted ∧ UpdatedAt < cutoff, so a
 * status's cards are all removable exactly when its newest one is (an older card of the same status is
 * removable whenever a newer one is). Normally that is one row (Delisted) instead of 2,000 rows of id,
 * status and updated_at: parsing those rows (and 2,000 timestamps) in postgres.js cost the job more per
 * batch than the DELETEs themselves in the bench (issue #17).
 *
 * Runs as a named prepared statement (fixed text per phase; cutoff and limit are parameters): one
 * round trip instead of two (see platform/db.ts `executePrepared`).
 *
 * The overrides are found by `= ANY (ARRAY(SELECT id FROM batch))`, not `IN (SELECT id FROM batch)`: for
 * the IN form the planner expects the batch's 2,000 ids and hashes them against a scan of the WHOLE
 * overrides table (all 96,000 rows of the bench, every batch); the array is probed through the
 * overrides' index on the card id. Phase A's statement 16.5–18.1 → 9.7–10.0 ms per batch of 2,000
 * (EXPLAIN ANALYZE, bench dataset, issue #17).
 */
export async function purgeRemovableBatch(tx: Tx, input: { phase: RetentionPhase; cutoff: Date; limit: number }): Promise<PurgedBatch> {
  const phase = input.phase === 'property_object'
    ? { cards: propertyObjectCards, removable: removablePropertyObjectCard(input.cutoff), overrides: propertyObjectDisplayOverrides, overridesOf: propertyObjectDisplayOverrides.propertyObjectId }
    : { cards: projectCards, removable: removableProjectCard(input.cutoff), overrides: buildingDisplayOverrides, overridesOf: buildingDisplayOverrides.projectId };
  const statement = sql`
    WITH batch AS (
      SELECT ${phase.cards.id} AS id FROM ${phase.cards}
      WHERE ${phase.removable}
      ORDER BY ${phase.cards.updatedAt}, ${phase.cards.id} LIMIT ${input.limit} FOR UPDATE SKIP LOCKED
    ), overrides AS (
      DELETE FROM ${phase.overrides} WHERE ${sql.identifier(phase.overridesOf.name)} = ANY (ARRAY(SELECT id FROM batch)) RETURNING 1
    ), cards AS (
      DELETE FROM ${phase.cards} WHERE id IN (SELECT id FROM batch) RETURNING id, status, updated_at
    )
    SELECT g.status, g.cards, g.newest, (SELECT string_agg(id::text, ',') FROM cards) AS ids,
      (SELECT count(*) FROM overrides)::int AS overrides
    FROM (SELECT status, count(*)::int AS cards, max(updated_at) AS newest FROM cards GROUP BY status) g`;
  const groups = await executePrepared<DeletedGroup>(tx, `catalog_retention_purge_${input.phase}`, statement);
  const live = groups.filter((g) => !isRemovable({ status: g.status, updatedAt: new Date(g.newest) }, input.cutoff));
  const ids = groups.length > 0 ? groups[0].ids.split(',') : [];
  if (live.length > 0) {
    throw new AppError('CATALOG_RETENTION_LIVE_CARD_IN_BATCH', 'PRECONDITION_FAILED',
      `the removal predicate selected ${live.reduce((n, g) => n + g.cards, 0)} card(s) that are not all removable (${live.map((g) => g.status).join(', ')}); the batch is rolled back`,
      { ids, statuses: live.map((g) => g.status) });
  }
  return { ids, deletedOverrides: groups[0]?.overrides ?? 0 };
}

/**
 * One row of the batch statement per status of the deleted cards: their count and newest updated_at
 * (drizzle leaves timestamptz as text); every row carries all the batch's ids (in the order the DELETE
 * returned them) and its overrides count.
 */
type DeletedGroup = { status: CardStatus; cards: number; newest: string; ids: string; overrides: number };

/** True if a run with this cutoff would still find work (HasMore after a limit or a stop request). */
export async function hasRemovableCards(db: DbOrTx, cutoff: Date): Promise<boolean> {
  const [row] = await db.execute<{ more: boolean }>(sql`SELECT
    EXISTS (SELECT 1 FROM ${propertyObjectCards} WHERE ${removablePropertyObjectCard(cutoff)})
    OR EXISTS (SELECT 1 FROM ${projectCards} WHERE ${removableProjectCard(cutoff)}) AS more`);
  return row.more;
}
