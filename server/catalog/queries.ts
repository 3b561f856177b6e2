import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { AppError } from '../platform/errors';
import { retentionCutoff } from './card';
import { removablePropertyObjectCard } from './delisted-card-purge';
import { projectCards, propertyObjectCards } from './schema';

/**
 * Reads of the catalog: the public card reads (storefront, favorites, selections) and the ops view of
 * the Delisted backlog. Public reads answer only Published cards: a Delisted, Hidden or removed card is
 * the same NOT_FOUND, so favorites/selections that keep an id degrade gracefully.
 */

export const CATALOG_CARD_NOT_FOUND = 'CATALOG_CARD_NOT_FOUND';

const cardNotFound = (id: string) => new AppError(CATALOG_CARD_NOT_FOUND, 'NOT_FOUND', 'This card is no longer on the storefront', { id });

export interface PropertyObjectCardView {
  id: string;
  projectId: string;
  buildingId: string;
  number: string;
  floor: number;
  rooms: number;
  area: number;
  price: number;
  saleStatus: string;
  /** the project card's name while that card is Published */
  projectName: string | null;
  updatedAt: Date;
}

export async function getPublishedPropertyObjectCard(db: DbOrTx, input: { id: string }): Promise<PropertyObjectCardView> {
  const [row] = await db
    .select({
      id: propertyObjectCards.id,
      projectId: propertyObjectCards.projectId,
      buildingId: propertyObjectCards.buildingId,
      number: propertyObjectCards.number,
      floor: propertyObjectCards.floor,
      rooms: propertyObjectCards.rooms,
      area: propertyObjectCards.area,
      price: propertyObjectCards.price,
      saleStatus: propertyObjectCards.saleStatus,
      projectName: projectCards.name,
      updatedAt: propertyObjectCards.updatedAt,
    })
    .from(propertyObjectCards)
    .leftJoin(projectCards, and(eq(projectCards.id, propertyObjectCards.projectId), eq(projectCards.status, 'Published')))
    .where(and(eq(propertyObjectCards.id, input.id), eq(propertyObjectCards.status, 'Published')));
  if (!row) throw cardNotFound(input.id);
  return row;
}

export interface ProjectCardView {
  id: string;
  name: string;
  city: string;
  freeCount: number;
  updatedAt: Date;
}

export async function getPublishedProjectCard(db: DbOrTx, input: { id: string }): Promise<ProjectCardView> {
  const [row] = await db
    .select({ id: projectCards.id, name: projectCards.name, city: projectCards.city, freeCount: projectCards.freeCount, updatedAt: projectCards.updatedAt })
    .from(projectCards)
    .where(and(eq(projectCards.id, input.id), eq(projectCards.status, 'Published')));
  if (!row) throw cardNotFound(input.id);
  return row;
}

/** PostgreSQL's clock: retention cutoffs are computed by the server, never from a client timestamp. */
export async function serverNow(db: DbOrTx): Promise<Date> {
  const [row] = await db.execute<{ now: Date | string }>(sql`SELECT now() AS now`);
  return new Date(row.now);
}

export interface DelistedBacklogKind {
  /** every Delisted card */
  all: number;
  /** Delisted cards with updated_at < cutoff (what retention should remove) */
  pastCutoff: number;
  oldestUpdatedAt: Date | null;
}

export interface DelistedBacklog {
  cutoff: Date;
  propertyObjects: DelistedBacklogKind;
  projects: DelistedBacklogKind;
}

type CutoffInput = { cutoff: Date } | { retentionPeriodMs: number };

async function resolveCutoff(db: DbOrTx, input: CutoffInput): Promise<Date> {
  return 'cutoff' in input ? input.cutoff : retentionCutoff(await serverNow(db), input.retentionPeriodMs);
}

/** Size of the Delisted backlog (metric catalog_delisted_backlog and the ops dashboard). */
export async function getDelistedBacklog(db: DbOrTx, input: CutoffInput): Promise<DelistedBacklog> {
  const cutoff = await resolveCutoff(db, input);
  const at = cutoff.toISOString();
  const count = async (table: typeof propertyObjectCards | typeof projectCards): Promise<DelistedBacklogKind> => {
    const [r] = await db.execute<{ all: number; past: number; oldest: Date | string | null }>(sql`
      SELECT count(*)::int AS all, (count(*) FILTER (WHERE updated_at < ${at}::timestamptz))::int AS past, min(updated_at) AS oldest
      FROM ${table} WHERE status = 'Delisted'`);
    return { all: r.all, pastCutoff: r.past, oldestUpdatedAt: r.oldest === null ? null : new Date(r.oldest) };
  };
  return { cutoff, propertyObjects: await count(propertyObjectCards), projects: await count(projectCards) };
}

export interface RetentionCandidates {
  cutoff: Date;
  propertyObjects: { count: number; oldestUpdatedAt: Date | null };
  /** removable once their object cards are gone; `waitingForObjectCards` still have a card that stays */
  projects: { count: number; oldestUpdatedAt: Date | null; waitingForObjectCards: number };
  estimatedBatches: number;
  fitsInOneRun: boolean;
}

/**
 * What a retention run started now would remove: the property object cards past the cutoff, and the
 * project cards past the cutoff whose object cards would all be removed first (objects → project).
 */
export async function getNextRetentionCandidates(
  db: DbOrTx,
  input: CutoffInput & { batchSize: number; maxBatchesPerRun: number },
): Promise<RetentionCandidates> {
  const cutoff = await resolveCutoff(db, input);
  const at = cutoff.toISOString();
  const [objects] = await db.execute<{ n: number; oldest: Date | string | null }>(sql`
    SELECT count(*)::int AS n, min(updated_at) AS oldest FROM ${propertyObjectCards} WHERE ${removablePropertyObjectCard(cutoff)}`);
  const [projects] = await db.execute<{ n: number; waiting: number; oldest: Date | string | null }>(sql`
    SELECT (count(*) FILTER (WHERE NOT p.blocked))::int AS n, (count(*) FILTER (WHERE p.blocked))::int AS waiting,
           min(p.updated_at) FILTER (WHERE NOT p.blocked) AS oldest
    FROM (
      SELECT pc.updated_at, EXISTS (
        SELECT 1 FROM ${propertyObjectCards} o
        WHERE o.project_id = pc.id AND NOT (o.status = 'Delisted' AND o.updated_at < ${at}::timestamptz)
      ) AS blocked
      FROM ${projectCards} pc WHERE pc.status = 'Delisted' AND pc.updated_at < ${at}::timestamptz
    ) p`);
  const batches = (n: number) => Math.ceil(n / input.batchSize);
  const estimatedBatches = batches(objects.n) + batches(projects.n);
  return {
    cutoff,
    propertyObjects: { count: objects.n, oldestUpdatedAt: objects.oldest === null ? null : new Date(objects.oldest) },
    projects: { count: projects.n, oldestUpdatedAt: projects.oldest === null ? null : new Date(projects.oldest), waitingForObjectCards: projects.waiting },
    estimatedBatches,
    fitsInOneRun: estimatedBatches <= input.maxBatchesPerRun,
  };
}
