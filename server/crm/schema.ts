import { getTableColumns, sql } from 'drizzle-orm';
import {
  bigserial, boolean, check, date, doublePrecision, index, integer, jsonb, numeric, pgSchema, text, timestamp, uniqueIndex, uuid,
} from 'drizzle-orm/pg-core';
import { inboxTable, outboxTable } from '../platform/outbox/table';

export const crm = pgSchema('crm');

export const BOOKING_STATUSES = [
  'Reserved', 'AwaitingPayment', 'Booked', 'Completed', 'ReserveExpired', 'BookingExpired', 'Cancelled',
] as const;
export const ACTIVE_BOOKING_STATUSES = ['Reserved', 'AwaitingPayment', 'Booked'] as const;
export const DEAL_STATUSES = ['Draft', 'Application', 'Booking', 'Sale', 'Cancelled'] as const;
/** NotRequired: free program. Pending → ContractUploaded → ReceiptUploaded → Paid: paid program. */
/** How a programme's reward is computed: a percentage of the flat's price, or a fixed sum. */
export const REWARD_KINDS = ['percent', 'fixed'] as const;
export const PAYMENT_STATUSES = ['NotRequired', 'Pending', 'ContractUploaded', 'ReceiptUploaded', 'Paid'] as const;

export const deals = crm.table(
  'deals',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    title: text('title').notNull(),
    agentId: uuid('agent_id'),
    /** the investor user of the deal (role investor): they see and act on this deal only through it */
    investorId: uuid('investor_id'),
    status: text('status', { enum: DEAL_STATUSES }).notNull(),
    version: integer('version').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('ck_deals_status', sql`${t.status} IN ('Draft', 'Application', 'Booking', 'Sale', 'Cancelled')`),
    index('ix_deals_tenant').on(t.tenantId, t.status),
    index('ix_deals_investor').on(t.investorId, t.updatedAt).where(sql`investor_id IS NOT NULL`),
    // words of the title ("Сделка №1019", "1019") found by ILIKE '%…%' (pg_trgm, migration 0012)
    index('ix_deals_title_trgm').using('gin', sql`${t.title} gin_trgm_ops`),
  ],
);

export const bookingPrograms = crm.table(
  'booking_programs',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    name: text('name').notNull(),
    isPaid: boolean('is_paid').notNull().default(false),
    reserveDurationMinutes: integer('reserve_duration_minutes').notNull().default(60),
    bookingDurationHours: integer('booking_duration_hours').notNull().default(48),
    /**
     * The agent's reward for a paid booking of this programme, set by the developer manager: `percent`
     * of the flat's price (value 0–100] or a `fixed` sum (value ≥ 0); both null = no reward. crm carries
     * the rule and the amount in booking-paid, so rewards reads no crm table.
     */
    rewardKind: text('reward_kind', { enum: REWARD_KINDS }),
    rewardValue: numeric('reward_value', { precision: 14, scale: 2, mode: 'number' }),
    /** DESIGN decision 10: how many times a booking of this program may be extended (the developer manager's setting) */
    maxExtensions: integer('max_extensions').notNull().default(2),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('ck_booking_programs_durations', sql`${t.reserveDurationMinutes} > 0 AND ${t.bookingDurationHours} > 0`),
    check('ck_booking_programs_reward', sql`(${t.rewardKind} IS NULL AND ${t.rewardValue} IS NULL) OR (${t.rewardKind} = 'percent' AND ${t.rewardValue} > 0 AND ${t.rewardValue} <= 100) OR (${t.rewardKind} = 'fixed' AND ${t.rewardValue} >= 0)`),
    check('ck_booking_programs_max_extensions', sql`${t.maxExtensions} >= 0`),
  ],
);

export const bookings = crm.table(
  'bookings',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    dealId: uuid('deal_id').notNull().references(() => deals.id),
    propertyObjectId: uuid('property_object_id').notNull(),
    programId: uuid('program_id').notNull().references(() => bookingPrograms.id),
    status: text('status', { enum: BOOKING_STATUSES }).notNull(),
    reserveExpiresAt: timestamp('reserve_expires_at', { withTimezone: true, precision: 3 }).notNull(),
    bookingExpiresAt: timestamp('booking_expires_at', { withTimezone: true, precision: 3 }),
    bookedAt: timestamp('booked_at', { withTimezone: true, precision: 3 }),
    paymentStatus: text('payment_status', { enum: PAYMENT_STATUSES }).notNull(),
    contractDocument: text('contract_document'),
    receiptDocument: text('receipt_document'),
    /** the buyer's requisite set (profile) and the version the booking was made with: a reference only */
    requisiteSetId: uuid('requisite_set_id'),
    requisiteSetVersion: integer('requisite_set_version'),
    createdBy: uuid('created_by'),
    closedReason: text('closed_reason'),
    closedAt: timestamp('closed_at', { withTimezone: true, precision: 3 }),
    /** how many times the booking was extended (DESIGN decision 10: at most its program's max_extensions) */
    extensionCount: integer('extension_count').notNull().default(0),
    version: integer('version').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    check(
      'ck_bookings_status',
      sql`${t.status} IN ('Reserved', 'AwaitingPayment', 'Booked', 'Completed', 'ReserveExpired', 'BookingExpired', 'Cancelled')`,
    ),
    check(
      'ck_bookings_payment_status',
      sql`${t.paymentStatus} IN ('NotRequired', 'Pending', 'ContractUploaded', 'ReceiptUploaded', 'Paid')`,
    ),
    // a Booked (or later Booked-derived) booking always has its booking timer
    check('ck_bookings_booked_timer', sql`${t.status} <> 'Booked' OR (${t.bookingExpiresAt} IS NOT NULL AND ${t.bookedAt} IS NOT NULL)`),
    check('ck_bookings_requisite_set', sql`(${t.requisiteSetId} IS NULL) = (${t.requisiteSetVersion} IS NULL)`),
    // INV-BKG-001: one active booking process per property object
    uniqueIndex('ux_bookings_active_property_object')
      .on(t.propertyObjectId)
      .where(sql`status IN ('Reserved', 'AwaitingPayment', 'Booked')`),
    // booking-expiration scans (INV-BKG-5)
    index('ix_bookings_reserve_expires_at')
      .on(t.reserveExpiresAt)
      .where(sql`status IN ('Reserved', 'AwaitingPayment')`),
    index('ix_bookings_booking_expires_at').on(t.bookingExpiresAt).where(sql`status = 'Booked'`),
    index('ix_bookings_tenant_status').on(t.tenantId, t.status, t.createdAt),
    // reports: one tenant's bookings created in a period (server/reports), a range scan at any volume
    index('ix_bookings_tenant_created').on(t.tenantId, t.createdAt),
    // the bookings list of the roles that see every tenant, newest first: its page read from the index
    // instead of sorting every booking joined with its deal
    index('ix_bookings_created_at').on(t.createdAt.desc().nullsLast(), t.id.desc()),
    index('ix_bookings_deal').on(t.dealId),
    index('ix_bookings_property_object').on(t.propertyObjectId),
    // the reconciliation's incremental cycle: the bookings changed since its last watermark (ops),
    // a range of the few recent changes instead of every booking
    index('ix_bookings_updated_at').on(t.updatedAt),
  ],
);

export const bookingTimeline = crm.table(
  'booking_timeline',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    bookingId: uuid('booking_id').notNull(),
    tenantId: uuid('tenant_id').notNull(),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    actorType: text('actor_type', { enum: ['user', 'system'] }).notNull(),
    actorId: text('actor_id').notNull(),
    action: text('action').notNull(),
    fromStatus: text('from_status'),
    toStatus: text('to_status').notNull(),
    reason: text('reason'),
    correlationId: uuid('correlation_id'),
    messageIds: jsonb('message_ids').$type<string[]>().notNull().default([]),
    bookingVersion: integer('booking_version').notNull(),
  },
  (t) => [index('ix_booking_timeline_booking').on(t.bookingId, t.at)],
);

/** Client idempotency keys of crm commands: a replay returns the stored result and writes nothing. */
export const idempotencyKeys = crm.table('idempotency_keys', {
  key: text('key').primaryKey(),
  actorId: text('actor_id').notNull(),
  command: text('command').notNull(),
  requestHash: text('request_hash').notNull(),
  response: jsonb('response').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const crmOutbox = outboxTable(crm);

/** The inbox of crm's consumers (crm.property-object-projection). */
export const crmInbox = inboxTable(crm);

export const PROJECTED_OBJECT_STATUSES = ['Free', 'Reserved', 'Booked', 'Sold', 'Hidden'] as const;

/**
 * crm's own view of chessboard's property objects (DESIGN decision 8), fed by
 * pin.chessboard.property-object-upserted/-status-changed/-deleted (crm reads no chessboard table).
 * `source_version` is the chessboard row version of the last applied upsert/status change (an older
 * or equal one is a no-op: events of one object travel on three topics); `deleted_at` is the time of
 * the last deletion — anything that happened at or before it is stale, even after a re-create.
 * (Its columns resemble deals' only in shape — uuid, uuid, uuid, status enum —; nothing to share.)
 */
export const crmPropertyObjects = crm.table(
  'property_objects',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    projectId: uuid('project_id').notNull(),
    status: text('status', { enum: PROJECTED_OBJECT_STATUSES }).notNull(),
    deleted: boolean('deleted').notNull().default(false),
    sourceVersion: integer('source_version').notNull(),
    sourceChangedAt: timestamp('source_changed_at', { withTimezone: true, precision: 3 }).notNull(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
    /** the object's price as its last upsert said (a programme's percentage reward is computed from it) */
    price: numeric('price', { precision: 14, scale: 2, mode: 'number' }),
    /** the floor and room count (0: studio) as its last upsert said; null until one arrived (reports split sales by them) */
    floor: integer('floor'),
    rooms: integer('rooms'),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    check('ck_crm_property_objects_status', sql`${t.status} IN ('Free', 'Reserved', 'Booked', 'Sold', 'Hidden')`),
    check('ck_crm_property_objects_deleted', sql`NOT ${t.deleted} OR ${t.deletedAt} IS NOT NULL`),
    check('ck_crm_property_objects_rooms', sql`${t.rooms} IS NULL OR ${t.rooms} >= 0`),
    // the bookings list's project filter: the project's objects without reading the whole projection
    index('ix_crm_property_objects_project').on(t.projectId),
  ],
);

export const BOOKING_ROLLUP_DIMS = ['all', 'project', 'agent', 'floor', 'rooms', 'reason'] as const;

/**
 * The reports' daily rollup of crm.bookings (job reports-daily-rollup; docs/decisions/0024): per UTC day
 * of creation and tenant, the funnel's counters per breakdown (`dim`: all, project, agent, floor, rooms,
 * reason; `key`: agent id, floor band, room bucket or reason, '' for none); the `all` row keeps every
 * step duration in seconds, so medians over many days stay exact.
 */
export const bookingDailyRollup = crm.table(
  'booking_daily_rollup',
  {
    day: date('day', { mode: 'string' }).notNull(),
    tenantId: uuid('tenant_id').notNull(),
    projectId: uuid('project_id'),
    dim: text('dim', { enum: BOOKING_ROLLUP_DIMS }).notNull(),
    key: text('key').notNull(),
    bookings: integer('bookings').notNull(),
    confirmed: integer('confirmed').notNull(),
    paid: integer('paid').notNull(),
    sold: integer('sold').notNull(),
    active: integer('active').notNull(),
    cancelled: integer('cancelled').notNull(),
    reserveExpired: integer('reserve_expired').notNull(),
    bookingExpired: integer('booking_expired').notNull(),
    confirmSecs: doublePrecision('confirm_secs').array(),
    paySecs: doublePrecision('pay_secs').array(),
    sellSecs: doublePrecision('sell_secs').array(),
  },
  (t) => [
    index('ix_booking_daily_rollup_tenant_day').on(t.tenantId, t.day),
    index('ix_booking_daily_rollup_day').on(t.day),
    // the rows with the step durations (the medians read them apart): one per tenant and day, out of ~65
    index('ix_booking_daily_rollup_all').on(t.tenantId, t.day).where(sql`dim = 'all'`),
    check('ck_booking_daily_rollup_dim', sql`${t.dim} IN ('all', 'project', 'agent', 'floor', 'rooms', 'reason')`),
  ],
);

/**
 * One row per rolled-up day. `settled`: every booking created that day had ended when the day was rolled
 * up; ended bookings never change (INV-BKG-8), so the day's rollup rows are final and reports read them.
 */
export const bookingRollupDays = crm.table(
  'booking_rollup_days',
  {
    day: date('day', { mode: 'string' }).primaryKey(),
    settled: boolean('settled').notNull(),
    bookings: integer('bookings').notNull(),
    rolledUpAt: timestamp('rolled_up_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('ix_booking_rollup_days_unsettled').on(t.day).where(sql`NOT ${t.settled}`)],
);

/**
 * crm's published reads (the `v_*` views): what ops (reconciliation, stuck holds, the saga timeline) and
 * reports may read of crm's tables, and all they may. Plain views, so the planner reads the tables'
 * indexes through them; a column the readers use cannot be dropped or changed without changing its view.
 * The booking's documents and requisites stay crm's: readers learn a booking's state, not its papers.
 */
const { contractDocument: _contract, receiptDocument: _receipt, requisiteSetId: _requisites, requisiteSetVersion: _requisitesVersion, ...publishedBookingColumns } = getTableColumns(bookings);
export const bookingsView = crm.view('v_bookings').as((qb) => qb.select(publishedBookingColumns).from(bookings));
export const dealsView = crm.view('v_deals').as((qb) => qb.select().from(deals));
export const bookingProgramsView = crm.view('v_booking_programs').as((qb) => qb.select().from(bookingPrograms));
export const bookingTimelineView = crm.view('v_booking_timeline').as((qb) => qb.select().from(bookingTimeline));
export const crmPropertyObjectsView = crm.view('v_property_objects').as((qb) => qb.select().from(crmPropertyObjects));
export const bookingDailyRollupView = crm.view('v_booking_daily_rollup').as((qb) => qb.select().from(bookingDailyRollup));
export const bookingRollupDaysView = crm.view('v_booking_rollup_days').as((qb) => qb.select().from(bookingRollupDays));
