import { and, asc, count, desc, eq, getTableColumns, gte, inArray, lte, or, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { storableDate } from '../platform/date-input';
import type { Actor } from '../auth/actor';
import { uuidArray, type DbOrTx } from '../platform/db';
import { crmError } from './errors';
import { ACTIVE_STATUSES, type BookingRecord } from './booking';
import { tenantFilter } from './commands/tenant-scope';
import { BOOKING_STATUSES, DEAL_STATUSES, bookingPrograms, bookings, bookingTimeline, crmPropertyObjects, deals } from './schema';

/** Read side of crm. Every query applies the actor's tenant filter: a foreign row is a missing row. */

const dateInput = z.union([z.date(), z.iso.datetime({ offset: true })]).transform((v) => new Date(v)).pipe(storableDate());
const page = z.number().int().min(1).max(100_000).default(1);
const pageSize = z.number().int().min(1).max(100).default(25);
/** a booking id / deal id, or the start of one (hex digits and dashes only, so it is safe in LIKE) */
/** what looks like an id (prefix) is searched as one; any search is also an object number */
const ID_PREFIX = /^[0-9a-fA-F-]{1,36}$/;
/** a booking id / deal id (or its beginning), or a property object's number ("101", "12A"); no control characters */
const bookingSearch = z.string().trim().min(1).max(36).regex(/^[^\p{C}]+$/u, 'a booking or deal id (or its beginning), or an object number');

export const bookingByIdInput = z.strictObject({ bookingId: z.uuid() });

export const listBookingsInput = z.strictObject({
  status: z.array(z.enum(BOOKING_STATUSES)).min(1).max(BOOKING_STATUSES.length).optional(),
  tenantId: z.uuid().optional(),
  /** active bookings whose current deadline (ReserveExpiresAt / BookingExpiresAt) is at most N minutes away (overdue ones included) */
  expiringWithinMinutes: z.number().int().min(0).max(60 * 24 * 30).optional(),
  dealId: z.uuid().optional(),
  propertyObjectId: z.uuid().optional(),
  /** the bookings of this project's objects (resolved by chessboard: see `ObjectScope`) */
  projectId: z.uuid().optional(),
  createdFrom: dateInput.optional(),
  createdTo: dateInput.optional(),
  search: bookingSearch.optional(),
  sort: z.enum(['createdAt', 'updatedAt', 'reserveExpiresAt', 'bookingExpiresAt', 'status']).default('createdAt'),
  direction: z.enum(['asc', 'desc']).default('desc'),
  page,
  pageSize,
});
export type ListBookingsInput = z.input<typeof listBookingsInput>;

/** a deal's id (or its beginning) or words of its title ("1003", "Сделка №10"); no control characters */
const dealSearch = z.string().trim().min(1).max(80).regex(/^[^\p{C}]+$/u, 'a deal id (or its beginning) or words of its title');

export const listDealsInput = z.strictObject({
  status: z.array(z.enum(DEAL_STATUSES)).min(1).max(DEAL_STATUSES.length).optional(),
  tenantId: z.uuid().optional(),
  search: dealSearch.optional(),
  page,
  pageSize,
});
export const dealByIdInput = z.strictObject({ dealId: z.uuid() });
export const listProgramsInput = z.strictObject({ tenantId: z.uuid().optional() }).optional();

export async function bookingById(db: DbOrTx, actor: Actor, input: z.infer<typeof bookingByIdInput>) {
  const [row] = await db
    .select({ booking: bookings, deal: { id: deals.id, title: deals.title, status: deals.status }, program: bookingPrograms })
    .from(bookings)
    .innerJoin(deals, eq(deals.id, bookings.dealId))
    .innerJoin(bookingPrograms, eq(bookingPrograms.id, bookings.programId))
    .where(and(eq(bookings.id, input.bookingId), tenantFilter(actor, bookings.tenantId)));
  if (!row) throw crmError('CRM_BOOKING_NOT_FOUND', 'No such booking', { bookingId: input.bookingId });
  const timeline = await db
    .select()
    .from(bookingTimeline)
    .where(eq(bookingTimeline.bookingId, input.bookingId))
    // ordered history: by the booking's version (the order the transitions committed in), not by clock
    .orderBy(asc(bookingTimeline.bookingVersion), asc(bookingTimeline.at), asc(bookingTimeline.id));
  return { ...row.booking, deal: row.deal, program: row.program, timeline };
}

const bookingSortColumns = {
  createdAt: bookings.createdAt,
  updatedAt: bookings.updatedAt,
  reserveExpiresAt: bookings.reserveExpiresAt,
  bookingExpiresAt: bookings.bookingExpiresAt,
  status: bookings.status,
} as const;

/** `%` and `_` in a user's search are literal characters, not LIKE wildcards */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function idPrefix(column: typeof bookings.id | typeof bookings.dealId | typeof deals.id, search: string): SQL {
  const s = search.toLowerCase();
  return s.length === 36 ? eq(column, s) : sql`${column}::text LIKE ${`${s}%`}`;
}

/**
 * What crm cannot know itself: which objects carry the searched number. The chessboard resolves them
 * (chessboard/queries.ts `propertyObjectIdsMatching`, in the actor's tenant scope) and the list filters by
 * the ids — crm never reads chessboard's tables. The project filter needs no ids: crm's own view of the
 * objects (crm.property_objects, every object it ever heard of, deleted ones too) carries the project.
 */
export interface ObjectScope {
  /** ids of the objects whose number is `input.search` */
  searchObjectIds?: string[];
  /** ids of the people whose name contains `input.search` (auth): the bookings of their deals */
  searchAgentIds?: string[];
  /** ids of the requisite sets whose buyer's surname is `input.search` (profile, never the data) */
  searchRequisiteSetIds?: string[];
}

const objectIn = (ids: string[]) => (ids.length === 0 ? sql`false` : sql`${bookings.propertyObjectId} = ANY(${uuidArray(ids)})`);

export async function listBookings(db: DbOrTx, actor: Actor, rawInput: ListBookingsInput, now: Date = new Date(), objects: ObjectScope = {}) {
  const input = listBookingsInput.parse(rawInput);
  const conditions: (SQL | undefined)[] = [tenantFilter(actor, bookings.tenantId)];
  if (input.projectId) {
    // a semi-join on crm's projection (ix_crm_property_objects_project), not a list of the project's
    // object ids shipped in: at 10,000 objects a project that array was 370 KB to parse and plan per read
    conditions.push(sql`${bookings.propertyObjectId} IN (SELECT ${crmPropertyObjects.id} FROM ${crmPropertyObjects} WHERE ${crmPropertyObjects.projectId} = ${input.projectId})`);
  }
  if (input.status) conditions.push(inArray(bookings.status, input.status));
  if (input.tenantId) conditions.push(eq(bookings.tenantId, input.tenantId));
  if (input.dealId) conditions.push(eq(bookings.dealId, input.dealId));
  if (input.propertyObjectId) conditions.push(eq(bookings.propertyObjectId, input.propertyObjectId));
  if (input.createdFrom) conditions.push(gte(bookings.createdAt, input.createdFrom));
  if (input.createdTo) conditions.push(lte(bookings.createdAt, input.createdTo));
  if (input.search) {
    const byNumber = objects.searchObjectIds?.length ? objectIn(objects.searchObjectIds) : undefined;
    const byId = ID_PREFIX.test(input.search) ? [idPrefix(bookings.id, input.search), idPrefix(bookings.dealId, input.search)] : [];
    // the names people use: the deal's title or number ("Сделка №1019", "1019"), its agent, the buyer
    const dealsWhere = (match: SQL) => sql`${bookings.dealId} IN (SELECT ${deals.id} FROM ${deals} WHERE ${and(match, tenantFilter(actor, deals.tenantId))})`;
    const byTitle = dealsWhere(sql`${deals.title} ILIKE ${`%${likeEscape(input.search)}%`} ESCAPE '\\'`);
    const byAgent = objects.searchAgentIds?.length ? dealsWhere(sql`${deals.agentId} = ANY(${uuidArray(objects.searchAgentIds)})`) : undefined;
    const byBuyer = objects.searchRequisiteSetIds?.length ? sql`${bookings.requisiteSetId} = ANY(${uuidArray(objects.searchRequisiteSetIds)})` : undefined;
    conditions.push(or(...byId, byNumber, byTitle, byAgent, byBuyer));
  }
  if (input.expiringWithinMinutes !== undefined) {
    const horizon = new Date(now.getTime() + input.expiringWithinMinutes * 60_000);
    conditions.push(
      or(
        and(inArray(bookings.status, ['Reserved', 'AwaitingPayment']), lte(bookings.reserveExpiresAt, horizon)),
        and(eq(bookings.status, 'Booked'), lte(bookings.bookingExpiresAt, horizon)),
      ),
    );
  }
  const where = and(...conditions);
  const column = bookingSortColumns[input.sort];
  const order = input.direction === 'asc' ? sql`${column} ASC NULLS LAST` : sql`${column} DESC NULLS LAST`;
  const [items, [total]] = await Promise.all([
    db
      // the deal's title with each row: lists name a deal the way the booking page does, not by a hex id
      .select({ ...getTableColumns(bookings), dealTitle: deals.title })
      .from(bookings)
      .leftJoin(deals, eq(deals.id, bookings.dealId))
      .where(where)
      .orderBy(order, input.direction === 'asc' ? asc(bookings.id) : desc(bookings.id))
      .limit(input.pageSize)
      .offset((input.page - 1) * input.pageSize),
    db.select({ n: count() }).from(bookings).where(where),
  ]);
  return { items, total: total?.n ?? 0, page: input.page, pageSize: input.pageSize };
}

export async function listDeals(db: DbOrTx, actor: Actor, rawInput: z.input<typeof listDealsInput>) {
  const input = listDealsInput.parse(rawInput);
  const conditions: (SQL | undefined)[] = [tenantFilter(actor, deals.tenantId)];
  if (input.status) conditions.push(inArray(deals.status, input.status));
  if (input.tenantId) conditions.push(eq(deals.tenantId, input.tenantId));
  if (input.search) {
    // the agent's deal picker searches by what people see (the title); an id prefix still works
    const byTitle = sql`${deals.title} ILIKE ${`%${likeEscape(input.search)}%`} ESCAPE '\\'`;
    conditions.push(ID_PREFIX.test(input.search) ? or(idPrefix(deals.id, input.search), byTitle) : byTitle);
  }
  const where = and(...conditions);
  const [items, [total]] = await Promise.all([
    db
      .select({
        ...getTableColumns(deals),
        // the flat the deal holds now (its newest active booking's object), so a picker can say so; the
        // outer row is named in full: drizzle writes a lone table's columns unqualified, which the inner FROM would capture
        heldObjectId: sql<string | null>`(SELECT b.property_object_id FROM ${bookings} b WHERE b.deal_id = "deals"."id" AND b.status IN ('Reserved', 'AwaitingPayment', 'Booked') ORDER BY b.created_at DESC LIMIT 1)`,
        // the buyer as the deal's newest booking with requisites names them (a reference, never the data)
        buyerRequisiteSetId: sql<string | null>`(SELECT b.requisite_set_id FROM ${bookings} b WHERE b.deal_id = "deals"."id" AND b.requisite_set_id IS NOT NULL ORDER BY b.created_at DESC LIMIT 1)`,
      })
      .from(deals)
      .where(where)
      .orderBy(desc(deals.updatedAt), desc(deals.id))
      .limit(input.pageSize)
      .offset((input.page - 1) * input.pageSize),
    db.select({ n: count() }).from(deals).where(where),
  ]);
  return { items, total: total?.n ?? 0, page: input.page, pageSize: input.pageSize };
}

export async function dealById(db: DbOrTx, actor: Actor, input: z.infer<typeof dealByIdInput>) {
  const [deal] = await db.select().from(deals).where(and(eq(deals.id, input.dealId), tenantFilter(actor, deals.tenantId)));
  if (!deal) throw crmError('CRM_DEAL_NOT_FOUND', 'No such deal', { dealId: input.dealId });
  const dealBookings = await db.select().from(bookings).where(eq(bookings.dealId, deal.id)).orderBy(desc(bookings.createdAt), desc(bookings.id));
  return { ...deal, bookings: dealBookings };
}

/** id → title of the given deals in the actor's scope (a foreign or unknown id is simply absent). */
export async function dealTitles(db: DbOrTx, actor: Actor, ids: string[]): Promise<Record<string, string>> {
  if (ids.length === 0) return {};
  const rows = await db.select({ id: deals.id, title: deals.title }).from(deals).where(and(inArray(deals.id, ids), tenantFilter(actor, deals.tenantId)));
  return Object.fromEntries(rows.map((r) => [r.id, r.title]));
}

export async function listPrograms(db: DbOrTx, actor: Actor, input: z.infer<typeof listProgramsInput> = {}) {
  return db
    .select()
    .from(bookingPrograms)
    .where(and(tenantFilter(actor, bookingPrograms.tenantId), input?.tenantId ? eq(bookingPrograms.tenantId, input.tenantId) : undefined))
    .orderBy(asc(bookingPrograms.name), asc(bookingPrograms.id));
}

/**
 * The active crm booking of a property object (INV-BKG-001: at most one), in the actor's tenant scope,
 * or null. For the ops repairs: what a manual release of the object would diverge from.
 */
export async function activeBookingOfObject(db: DbOrTx, actor: Actor, propertyObjectId: string): Promise<BookingRecord | null> {
  const [row] = await db
    .select()
    .from(bookings)
    .where(and(eq(bookings.propertyObjectId, propertyObjectId), inArray(bookings.status, [...ACTIVE_STATUSES]), tenantFilter(actor, bookings.tenantId)));
  return row ?? null;
}

/** One booking by id in the actor's tenant scope (no joins), or null. */
export async function bookingRecordById(db: DbOrTx, actor: Actor, bookingId: string): Promise<BookingRecord | null> {
  const [row] = await db.select().from(bookings).where(and(eq(bookings.id, bookingId), tenantFilter(actor, bookings.tenantId)));
  return row ?? null;
}

/** A short booking id as lists show it: the first 8 hex digits of the full id. */
export const shortBookingId = z.string().regex(/^[0-9a-f]{8}$/i);

/**
 * `/bookings/<short id>`: the full id of the one booking in the actor's tenant scope whose
 * id starts with the prefix; null when none or more than one match (the page answers 404, never a guess).
 */
export async function bookingIdByPrefix(db: DbOrTx, actor: Actor, prefix: string): Promise<string | null> {
  const p = shortBookingId.parse(prefix).toLowerCase();
  const rows = await db
    .select({ id: bookings.id })
    .from(bookings)
    .where(and(sql`${bookings.id}::text LIKE ${`${p}%`}`, tenantFilter(actor, bookings.tenantId)))
    .limit(2);
  return rows.length === 1 ? rows[0].id : null;
}

/**
 * The bookings (every tenant) written at or after `since`, with their objects: what the ops reconciliation
 * compares again in its incremental cycle (ix_bookings_updated_at: a range of the recent changes).
 */
export async function bookingsChangedSince(db: DbOrTx, since: Date): Promise<{ id: string; propertyObjectId: string }[]> {
  return db.select({ id: bookings.id, propertyObjectId: bookings.propertyObjectId }).from(bookings).where(gte(bookings.updatedAt, since));
}
