import { and, asc, desc, eq, gte, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { AnyColumn } from 'drizzle-orm';
import { tenantScope, type Actor } from '../auth/actor';
import type { DbOrTx } from '../platform/db';
import { AppError } from '../platform/errors';
import { investorTenantsOf } from './ports';
import {
  buildings, PROPERTY_OBJECT_STATUSES, projects, propertyObjects, propertyObjectStatusHistory,
} from './schema';

/**
 * Read side of the chessboard for the console. Every query applies the actor's tenant scope; a row of
 * a foreign tenant is indistinguishable from a missing one (NOT_FOUND).
 */

export type PropertyObjectStatus = (typeof PROPERTY_OBJECT_STATUSES)[number];

function scoped(actor: Actor, column: AnyColumn): SQL | undefined {
  // an investor reads (only) the projects of the developers of its own deals: it books a flat for them
  if (actor.role === 'investor') return sql`${column} IN ${investorTenantsOf(actor.userId)}`;
  const scope = tenantScope(actor);
  return scope === null ? undefined : eq(column, scope);
}

const notFound = (what: string) => new AppError(`CHESSBOARD_${what.toUpperCase()}_NOT_FOUND`, 'NOT_FOUND', `${what} not found`);

export async function listProjects(db: DbOrTx, actor: Actor) {
  return db
    .select({
      id: projects.id,
      tenantId: projects.tenantId,
      name: projects.name,
      city: projects.city,
      freeCount: projects.propertyObjectsFreeCount,
      totalCount: projects.propertyObjectsTotalCount,
      heldCount: projects.propertyObjectsHeldCount,
      soldCount: projects.propertyObjectsSoldCount,
    })
    .from(projects)
    .where(and(isNull(projects.deletedAt), scoped(actor, projects.tenantId)))
    .orderBy(asc(projects.name), asc(projects.id));
}

export async function listBuildings(db: DbOrTx, actor: Actor, projectId: string) {
  const [project] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, projectId), isNull(projects.deletedAt), scoped(actor, projects.tenantId)));
  if (!project) throw notFound('project');
  return db
    .select({ id: buildings.id, name: buildings.name, sections: buildings.sections, floors: buildings.floors })
    .from(buildings)
    .where(and(eq(buildings.projectId, projectId), scoped(actor, buildings.tenantId)))
    .orderBy(asc(buildings.name), asc(buildings.id));
}

export type StatusCounts = Record<PropertyObjectStatus, number>;

/**
 * Every cell of a building in ONE query (a 1,000-unit building is one round trip), plus the counts per
 * status computed from the same rows. `serverNow` lets the client correct its clock for countdowns.
 */
export async function getGrid(db: DbOrTx, actor: Actor, buildingId: string) {
  const [building] = await db
    .select({
      id: buildings.id, name: buildings.name, sections: buildings.sections, floors: buildings.floors,
      projectId: buildings.projectId, projectName: projects.name, tenantId: buildings.tenantId,
    })
    .from(buildings)
    .innerJoin(projects, eq(projects.id, buildings.projectId))
    .where(and(eq(buildings.id, buildingId), scoped(actor, buildings.tenantId)));
  if (!building) throw notFound('building');

  // each read names the columns its screen shows: getObject's history read has the same shape over other
  // columns (the `duplicates` tool pairs them; a shared column list would fetch what one of them does not use)
  const cells = await db
    .select({
      id: propertyObjects.id,
      number: propertyObjects.number,
      floor: propertyObjects.floor,
      section: propertyObjects.section,
      rooms: propertyObjects.rooms,
      area: propertyObjects.area,
      price: propertyObjects.price,
      status: propertyObjects.status,
      reservedUntil: propertyObjects.reservedUntil,
      bookedUntil: propertyObjects.bookedUntil,
      holdDealId: propertyObjects.holdDealId,
      statusChangedAt: propertyObjects.statusChangedAt,
      version: propertyObjects.version,
    })
    .from(propertyObjects)
    .where(and(eq(propertyObjects.buildingId, buildingId), scoped(actor, propertyObjects.tenantId)))
    .orderBy(desc(propertyObjects.floor), asc(propertyObjects.section), asc(propertyObjects.number));

  const counts = Object.fromEntries(PROPERTY_OBJECT_STATUSES.map((s) => [s, 0])) as StatusCounts;
  for (const cell of cells) counts[cell.status] += 1;
  return { building, cells, counts, total: cells.length, serverNow: new Date() };
}

export type Grid = Awaited<ReturnType<typeof getGrid>>;
export type GridCell = Grid['cells'][number];

/** Object details for the drawer plus its status history (newest first). */
export async function getObject(db: DbOrTx, actor: Actor, propertyObjectId: string, historyLimit = 200) {
  const [object] = await db
    .select({
      id: propertyObjects.id,
      tenantId: propertyObjects.tenantId,
      projectId: propertyObjects.projectId,
      projectName: projects.name,
      buildingId: propertyObjects.buildingId,
      buildingName: buildings.name,
      number: propertyObjects.number,
      floor: propertyObjects.floor,
      section: propertyObjects.section,
      rooms: propertyObjects.rooms,
      area: propertyObjects.area,
      price: propertyObjects.price,
      status: propertyObjects.status,
      statusSource: propertyObjects.statusSource,
      reservedUntil: propertyObjects.reservedUntil,
      bookedUntil: propertyObjects.bookedUntil,
      holdDealId: propertyObjects.holdDealId,
      holdBookingId: propertyObjects.holdBookingId,
      soldAt: propertyObjects.soldAt,
      statusChangedAt: propertyObjects.statusChangedAt,
      updatedAt: propertyObjects.updatedAt,
      version: propertyObjects.version,
    })
    .from(propertyObjects)
    .innerJoin(buildings, eq(buildings.id, propertyObjects.buildingId))
    .innerJoin(projects, eq(projects.id, propertyObjects.projectId))
    .where(and(eq(propertyObjects.id, propertyObjectId), scoped(actor, propertyObjects.tenantId)));
  if (!object) throw notFound('property_object');

  const history = await db
    .select({
      id: propertyObjectStatusHistory.id,
      at: propertyObjectStatusHistory.at,
      fromStatus: propertyObjectStatusHistory.fromStatus,
      toStatus: propertyObjectStatusHistory.toStatus,
      statusSource: propertyObjectStatusHistory.statusSource,
      bookingId: propertyObjectStatusHistory.bookingId,
      dealId: propertyObjectStatusHistory.dealId,
      actorId: propertyObjectStatusHistory.actorId,
      reason: propertyObjectStatusHistory.reason,
      messageId: propertyObjectStatusHistory.messageId,
      causationId: propertyObjectStatusHistory.causationId,
      version: propertyObjectStatusHistory.version,
    })
    .from(propertyObjectStatusHistory)
    .where(and(eq(propertyObjectStatusHistory.propertyObjectId, propertyObjectId), scoped(actor, propertyObjectStatusHistory.tenantId)))
    .orderBy(desc(propertyObjectStatusHistory.at), desc(propertyObjectStatusHistory.id))
    .limit(historyLimit);

  return { object, history };
}

/**
 * A cheap fingerprint of a building's cells for the live feed: any committed status change bumps an
 * object's version, so (count, sum of versions) changes whenever the grid would render differently.
 */
export async function buildingFingerprint(db: DbOrTx, actor: Actor, buildingId: string): Promise<string> {
  const [row] = await db
    .select({
      n: sql<number>`count(*)::int`,
      versions: sql<string>`coalesce(sum(${propertyObjects.version}), 0)::text`,
    })
    .from(propertyObjects)
    .where(and(eq(propertyObjects.buildingId, buildingId), scoped(actor, propertyObjects.tenantId)));
  return `${row?.n ?? 0}:${row?.versions ?? 0}`;
}

/** The tenant of a building the actor may see; null when there is none or it is another tenant's. */
export async function visibleBuildingTenant(db: DbOrTx, actor: Actor, buildingId: string): Promise<string | null> {
  const [row] = await db.select({ tenantId: buildings.tenantId }).from(buildings).where(and(eq(buildings.id, buildingId), scoped(actor, buildings.tenantId)));
  return row?.tenantId ?? null;
}

/**
 * `buildingFingerprint` for the live feed's shared watch of a building: read once per commit for all
 * the streams watching it, each of which was authorised for the building (visibleBuildingTenant) when
 * it opened; the building's tenant still bounds the read.
 */
export async function tenantBuildingFingerprint(db: DbOrTx, tenantId: string, buildingId: string): Promise<string> {
  const [row] = await db
    .select({
      n: sql<number>`count(*)::int`,
      versions: sql<string>`coalesce(sum(${propertyObjects.version}), 0)::text`,
    })
    .from(propertyObjects)
    .where(and(eq(propertyObjects.buildingId, buildingId), eq(propertyObjects.tenantId, tenantId)));
  return `${row?.n ?? 0}:${row?.versions ?? 0}`;
}

/** Labels of a page of objects (bookings list: number, building, project); foreign ids are absent. */
export async function objectLabels(db: DbOrTx, actor: Actor, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .select({
      id: propertyObjects.id, number: propertyObjects.number, floor: propertyObjects.floor, section: propertyObjects.section,
      status: propertyObjects.status, buildingId: propertyObjects.buildingId, buildingName: buildings.name,
      projectId: propertyObjects.projectId, projectName: projects.name,
    })
    .from(propertyObjects)
    .innerJoin(buildings, eq(buildings.id, propertyObjects.buildingId))
    .innerJoin(projects, eq(projects.id, propertyObjects.projectId))
    .where(and(inArray(propertyObjects.id, ids), scoped(actor, propertyObjects.tenantId)));
}

/** At most this many objects narrow a list of another context (a project larger than this is cut, and says so). */
export const OBJECT_ID_MATCH_LIMIT = 20_000;

/**
 * Ids of the property objects (within the actor's tenant scope) of a project and/or with a number —
 * what a list of another context filters by, without reading chessboard's tables itself (the bookings
 * list: "project", "object number"). The number matches whole and case-insensitively ("12a" = "12A").
 */
export async function propertyObjectIdsMatching(
  db: DbOrTx,
  actor: Actor,
  input: { projectId?: string; number?: string },
): Promise<{ ids: string[]; truncated: boolean }> {
  const rows = await db
    .select({ id: propertyObjects.id })
    .from(propertyObjects)
    .where(and(
      scoped(actor, propertyObjects.tenantId),
      input.projectId ? eq(propertyObjects.projectId, input.projectId) : undefined,
      input.number !== undefined ? sql`lower(${propertyObjects.number}) = lower(${input.number})` : undefined,
    ))
    .limit(OBJECT_ID_MATCH_LIMIT + 1);
  return { ids: rows.slice(0, OBJECT_ID_MATCH_LIMIT).map((r) => r.id), truncated: rows.length > OBJECT_ID_MATCH_LIMIT };
}

/**
 * The ids of the property objects (every tenant) written at or after `since`: what the ops reconciliation
 * compares again in its incremental cycle (ix_property_objects_updated_at: a range of the recent changes).
 */
export async function propertyObjectsChangedSince(db: DbOrTx, since: Date): Promise<string[]> {
  const rows = await db.select({ id: propertyObjects.id }).from(propertyObjects).where(gte(propertyObjects.updatedAt, since));
  return rows.map((r) => r.id);
}
