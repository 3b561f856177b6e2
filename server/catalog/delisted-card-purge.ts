import { and, lt, notExists, sql } from 'drizzle-orm';
import { type DbOrTx, type Tx } from '../platform/db';
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
 * One batch of a phase in two statements: first select up to `limit` removable cards, oldest updated_at
 * first, under row locks (FOR UPDATE SKIP LOCKED: a row locked by another run or by a restoring upsert is
 * left for later) and hand their ids to `onSelected` — so that whatever fails afterwards (the DELETE
 * itself, the guard below) the caller can still name the batch that could not be deleted, as the spec
 * asks for a systematically undeletable batch. Then delete their display overrides (live and
 * soft-deleted — their target is gone) and the cards by those ids. The spec's order and predicate.
 * The ids travel as one comma-separated text each way: parsing thousands of uuid rows in postgres.js
 * costs more than the statements.
 *
 * The guard: the domain rule (card.ts `isRemovable`) is checked on what the DELETE actually removed,
 * and if the SQL predicate ever let a live card through, the call throws and the caller's transaction
 * rolls the whole batch back — nothing live is ever removed. The deleted cards come back grouped by
 * status — per status its count and its newest updated_at — and the rule is checked on each status's
 * newest card: the rule is Status = Delisted ∧ UpdatedAt < cutoff, so a status's cards are all
 * removable exactly when its newest one is.
 *
 * Both run as named prepared statements (fixed text per phase; cutoff, limit and ids are parameters).
 *
 * The overrides are found by `= ANY (…)` on an array, not `IN (SELECT …)`: for the IN form the planner
 * expects the batch's ids and hashes them against a scan of the WHOLE overrides table; the array is
 * probed through the overrides' index on the card id.
 */
export async function purgeRemovableBatch(
  tx: Tx,
  input: { phase: RetentionPhase; cutoff: Date; limit: number },
  onSelected: (ids: string[]) => void = () => {},
): Promise<PurgedBatch> {
  const phase = input.phase === 'property_object'
    ? { cards: propertyObjectCards, removable: removablePropertyObjectCard(input.cutoff), overrides: propertyObjectDisplayOverrides, overridesOf: propertyObjectDisplayOverrides.propertyObjectId }
    : { cards: projectCards, removable: removableProjectCard(input.cutoff), overrides: buildingDisplayOverrides, overridesOf: buildingDisplayOverrides.projectId };
  const [selected] = await tx.select({ ids: sql<string | null>`string_agg(b.id::text, ',')` }).from(sql`(
      SELECT ${phase.cards.id} AS id FROM ${phase.cards}
      WHERE ${phase.removable}
      ORDER BY ${phase.cards.updatedAt}, ${phase.cards.id} LIMIT ${input.limit} FOR UPDATE SKIP LOCKED
    ) b`).prepare(`catalog_retention_select_${input.phase}`).execute();
  const ids = selected?.ids ? selected.ids.split(',') : [];
  onSelected(ids);
  if (ids.length === 0) return { ids, deletedOverrides: 0 };
  // one statement, its parts as the WITH queries of one select (drizzle's $with), run prepared: its text is fixed per phase
  const batch = tx.$with('batch', {}).as(sql`SELECT string_to_array(${selected!.ids}::text, ',')::uuid[] AS ids`);
  const overrides = tx.$with('overrides', {}).as(sql`
      DELETE FROM ${phase.overrides} WHERE ${sql.identifier(phase.overridesOf.name)} = ANY ((SELECT ids FROM batch)::uuid[]) RETURNING 1`);
  const cards = tx.$with('cards', {}).as(sql`
      DELETE FROM ${phase.cards} WHERE id = ANY ((SELECT ids FROM batch)::uuid[]) RETURNING id, status, updated_at`);
  const groups: DeletedGroup[] = await tx.with(batch, overrides, cards)
    .select({
      status: sql<CardStatus>`g.status`, cards: sql<number>`g.cards`, newest: sql<string>`g.newest`,
      overrides: sql<number>`(SELECT count(*) FROM overrides)::int`,
    })
    .from(sql`(SELECT status, count(*)::int AS cards, max(updated_at) AS newest FROM cards GROUP BY status) g`)
    .prepare(`catalog_retention_purge_${input.phase}`).execute();
  const live = groups.filter((g) => !isRemovable({ status: g.status, updatedAt: new Date(g.newest) }, input.cutoff));
  if (live.length > 0) {
    throw new AppError('CATALOG_RETENTION_LIVE_CARD_IN_BATCH', 'PRECONDITION_FAILED',
      `the removal predicate selected ${live.reduce((n, g) => n + g.cards, 0)} card(s) that are not all removable (${live.map((g) => g.status).join(', ')}); the batch is rolled back`,
      { ids, statuses: live.map((g) => g.status) });
  }
  return { ids, deletedOverrides: groups[0]?.overrides ?? 0 };
}

/**
 * One row of the batch statement per status of the deleted cards: their count and newest updated_at
 * (drizzle leaves timestamptz as text) and the batch's overrides count.
 */
type DeletedGroup = { status: CardStatus; cards: number; newest: string; overrides: number };

/** True if a run with this cutoff would still find work (HasMore after a limit or a stop request). */
export async function hasRemovableCards(db: DbOrTx, cutoff: Date): Promise<boolean> {
  const [row] = await db.execute<{ more: boolean }>(sql`SELECT
    EXISTS (SELECT 1 FROM ${propertyObjectCards} WHERE ${removablePropertyObjectCard(cutoff)})
    OR EXISTS (SELECT 1 FROM ${projectCards} WHERE ${removableProjectCard(cutoff)}) AS more`);
  return row.more;
}
