import { sql } from 'drizzle-orm';
import {
  bigint, bigserial, boolean, check, index, integer, numeric, pgSchema, text, timestamp, uuid,
} from 'drizzle-orm/pg-core';
import { inboxTable, outboxTable } from '../platform/outbox/table';

export const chessboard = pgSchema('chessboard');

export const PROPERTY_OBJECT_STATUSES = ['Free', 'Reserved', 'Booked', 'Sold', 'Hidden'] as const;
export const STATUS_SOURCES = ['Crm', 'ExpirationJob', 'Manual', 'Import'] as const;

export const projects = chessboard.table('projects', {
  id: uuid('id').primaryKey(),
  tenantId: uuid('tenant_id').notNull(),
  name: text('name').notNull(),
  city: text('city').notNull(),
  propertyObjectsFreeCount: integer('property_objects_free_count').notNull().default(0),
  propertyObjectsTotalCount: integer('property_objects_total_count').notNull().default(0),
  propertyObjectsHeldCount: integer('property_objects_held_count').notNull().default(0),
  propertyObjectsSoldCount: integer('property_objects_sold_count').notNull().default(0),
  /** set by a ProjectAggregatesRecalcRequested; cleared by project-aggregates-recalc (debounced) */
  aggregatesRecalcRequestedAt: timestamp('aggregates_recalc_requested_at', { withTimezone: true, precision: 3 }),
  aggregatesRecalculatedAt: timestamp('aggregates_recalculated_at', { withTimezone: true, precision: 3 }),
  deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
  version: integer('version').notNull().default(1),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [
  index('ix_projects_tenant').on(t.tenantId),
  index('ix_projects_recalc_requested').on(t.aggregatesRecalcRequestedAt).where(sql`aggregates_recalc_requested_at IS NOT NULL`),
]);

export const buildings = chessboard.table('buildings', {
  id: uuid('id').primaryKey(),
  tenantId: uuid('tenant_id').notNull(),
  projectId: uuid('project_id').notNull().references(() => projects.id),
  name: text('name').notNull(),
  sections: integer('sections').notNull(),
  floors: integer('floors').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [index('ix_buildings_project').on(t.projectId)]);

export const propertyObjects = chessboard.table(
  'property_objects',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    projectId: uuid('project_id').notNull().references(() => projects.id),
    buildingId: uuid('building_id').notNull().references(() => buildings.id),
    section: integer('section').notNull(),
    floor: integer('floor').notNull(),
    number: text('number').notNull(),
    rooms: integer('rooms').notNull(),
    area: numeric('area', { precision: 7, scale: 2, mode: 'number' }).notNull(),
    price: numeric('price', { precision: 14, scale: 2, mode: 'number' }).notNull(),
    status: text('status', { enum: PROPERTY_OBJECT_STATUSES }).notNull(),
    reservedUntil: timestamp('reserved_until', { withTimezone: true, precision: 3 }),
    bookedUntil: timestamp('booked_until', { withTimezone: true, precision: 3 }),
    holdDealId: uuid('hold_deal_id'),
    /**
     * The CRM booking whose events put the hold here (null when not held, or for holds seeded without it).
     * The consumer tells a stale release of an earlier booking of the same deal from a real one by it.
     */
    holdBookingId: uuid('hold_booking_id'),
    soldAt: timestamp('sold_at', { withTimezone: true, precision: 3 }),
    statusSource: text('status_source', { enum: STATUS_SOURCES }).notNull(),
    statusChangedAt: timestamp('status_changed_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    version: integer('version').notNull().default(1),
  },
  (t) => [
    check('ck_property_objects_status', sql`${t.status} IN ('Free', 'Reserved', 'Booked', 'Sold', 'Hidden')`),
    check('ck_property_objects_status_source', sql`${t.statusSource} IN ('Crm', 'ExpirationJob', 'Manual', 'Import')`),
    // INV-CHS-002: timers and the hold owner exist exactly in the statuses that own them
    check(
      'ck_property_objects_inv_chs_002',
      sql`((${t.status} = 'Reserved') = (${t.reservedUntil} IS NOT NULL))
        AND ((${t.status} = 'Booked') = (${t.bookedUntil} IS NOT NULL))
        AND ((${t.status} IN ('Reserved', 'Booked')) = (${t.holdDealId} IS NOT NULL))`,
    ),
    // the hold's booking exists only while there is a hold (companion of INV-CHS-002)
    check('ck_property_objects_hold_booking', sql`${t.holdBookingId} IS NULL OR ${t.status} IN ('Reserved', 'Booked')`),
    check('ck_property_objects_sizes', sql`${t.rooms} >= 0 AND ${t.area} > 0 AND ${t.price} >= 0`),
    // (timer, id): the hold-expiration job's batch order, and its backlog / skipped-locked counts read
    // the index alone (Index Only Scan), never the heap rows scattered over a large table
    index('ix_property_objects_reserved_until').on(t.reservedUntil, t.id).where(sql`reserved_until IS NOT NULL`),
    index('ix_property_objects_booked_until').on(t.bookedUntil, t.id).where(sql`booked_until IS NOT NULL`),
    // the held objects with every column the reconciliation's "hold without booking" read uses: an
    // Index Only Scan of the ~1 % of objects that are held, instead of a scan of the whole table
    index('ix_property_objects_held')
      .on(t.updatedAt, t.id, t.tenantId, t.projectId, t.buildingId, t.number, t.status, t.reservedUntil, t.bookedUntil, t.holdDealId, t.holdBookingId)
      .where(sql`status IN ('Reserved', 'Booked')`),
    index('ix_property_objects_building_grid').on(t.buildingId, t.floor, t.section),
    index('ix_property_objects_project_status').on(t.projectId, t.status),
    // the bookings list's "object number" search (propertyObjectIdsMatching): whole number, any case
    index('ix_property_objects_number').on(sql`lower(number)`),
    // the reconciliation's incremental cycle: the objects changed since its last watermark (ops), a range
    // of the recent changes instead of the million objects; held ones are also in ix_property_objects_held,
    // but a release leaves that index and is exactly the change an active booking must be compared after
    index('ix_property_objects_updated_at').on(t.updatedAt),
  ],
);

/**
 * DESIGN decision 3: per booking, the highest bookingVersion the consumer applied. `released` marks a
 * release (possibly a tombstone that arrived before its create) so a late create does not re-hold.
 */
export const crmBookingVersions = chessboard.table('crm_booking_versions', {
  bookingId: uuid('booking_id').primaryKey(),
  propertyObjectId: uuid('property_object_id').notNull(),
  dealId: uuid('deal_id').notNull(),
  appliedVersion: integer('applied_version').notNull(),
  released: boolean('released').notNull().default(false),
  /** crm's time (envelope occurredAt) of the latest recorded event: which of two bookings of a deal is newer */
  lastEventAt: timestamp('last_event_at', { withTimezone: true, precision: 3 }),
  /** crm's creation time of the booking (DESIGN decision 9): which of two bookings of an object is newer */
  bookingCreatedAt: timestamp('booking_created_at', { withTimezone: true, precision: 3 }),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

/** Every status transition of an object: the drawer's history and ops' audit trail. */
export const propertyObjectStatusHistory = chessboard.table('property_object_status_history', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  propertyObjectId: uuid('property_object_id').notNull(),
  tenantId: uuid('tenant_id').notNull(),
  fromStatus: text('from_status').notNull(),
  toStatus: text('to_status').notNull(),
  statusSource: text('status_source').notNull(),
  at: timestamp('at', { withTimezone: true, precision: 3 }).notNull(),
  bookingId: uuid('booking_id'),
  dealId: uuid('deal_id'),
  actorId: text('actor_id'),
  reason: text('reason'),
  causationId: uuid('causation_id'),
  messageId: uuid('message_id'),
  version: integer('version').notNull(),
}, (t) => [index('ix_po_status_history_object').on(t.propertyObjectId, t.at)]);

/** Queryable record of each safety-net / manual release (what the WARN "lost CRM release" says). */
export const holdReleases = chessboard.table('hold_releases', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  propertyObjectId: uuid('property_object_id').notNull(),
  tenantId: uuid('tenant_id').notNull(),
  projectId: uuid('project_id').notNull(),
  holdDealId: uuid('hold_deal_id'),
  fromStatus: text('from_status').notNull(),
  expiredTimerAt: timestamp('expired_timer_at', { withTimezone: true, precision: 3 }),
  // bigint: a hold forgotten for weeks overflows an int of milliseconds
  overdueByMs: bigint('overdue_by_ms', { mode: 'number' }),
  statusSource: text('status_source').notNull(),
  runId: uuid('run_id'),
  actorId: text('actor_id'),
  reason: text('reason'),
  messageId: uuid('message_id').notNull(),
  releasedAt: timestamp('released_at', { withTimezone: true, precision: 3 }).notNull(),
}, (t) => [index('ix_hold_releases_released_at').on(t.releasedAt)]);

/** INV-CHS-003 violations seen by the consumer (also sent to the DLQ) for ops. */
export const holdMismatches = chessboard.table('hold_mismatches', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  propertyObjectId: uuid('property_object_id').notNull(),
  tenantId: uuid('tenant_id'),
  bookingId: uuid('booking_id'),
  messageId: uuid('message_id').notNull(),
  topic: text('topic').notNull(),
  eventDealId: uuid('event_deal_id'),
  holdDealId: uuid('hold_deal_id'),
  objectStatus: text('object_status').notNull(),
  /** why the hold guard refused (another deal holds it, another booking of the deal holds it, …) */
  detail: text('detail'),
  observedAt: timestamp('observed_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  resolvedAt: timestamp('resolved_at', { withTimezone: true, precision: 3 }),
}, (t) => [index('ix_hold_mismatches_observed').on(t.observedAt)]);

export const chessboardInbox = inboxTable(chessboard);
export const chessboardOutbox = outboxTable(chessboard);

/**
 * chessboard's published reads (the `v_*` views): what ops (reconciliation, stuck holds, releases,
 * mismatches, the DLQ's object names, the saga timeline) may read of chessboard's tables. Plain views, so
 * the planner reads the tables' indexes through them (the reconciliation's index-only scans included); a
 * column the readers use cannot be dropped or changed without changing its view.
 */
export const projectsView = chessboard.view('v_projects').as((qb) => qb.select().from(projects));
export const buildingsView = chessboard.view('v_buildings').as((qb) => qb.select().from(buildings));
export const propertyObjectsView = chessboard.view('v_property_objects').as((qb) => qb.select().from(propertyObjects));
export const crmBookingVersionsView = chessboard.view('v_crm_booking_versions').as((qb) => qb.select().from(crmBookingVersions));
export const holdReleasesView = chessboard.view('v_hold_releases').as((qb) => qb.select().from(holdReleases));
export const holdMismatchesView = chessboard.view('v_hold_mismatches').as((qb) => qb.select().from(holdMismatches));
