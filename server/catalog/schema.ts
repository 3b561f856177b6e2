import { sql } from 'drizzle-orm';
import { check, index, integer, numeric, pgSchema, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { inboxTable } from '../platform/outbox/table';

export const catalog = pgSchema('catalog');

export const CARD_STATUSES = ['Published', 'Hidden', 'Delisted'] as const;
const cardStatusCheck = (col: unknown) => sql`${col} IN ('Published', 'Hidden', 'Delisted')`;

/**
 * The columns by which a card follows its chessboard source, the same on project and object cards
 * (card-projection.ts decides on them). A function: each table needs column builders of its own.
 */
const cardSourceColumns = () => ({
  sourceVersion: integer('source_version').notNull().default(0),
  /**
   * Source time of the last applied event (upsert updatedAt, statusChangedAt, or deletedAt on delisting).
   * Delete events carry no version: this orders them against upserts (a restoring upsert that overtook
   * its older delete wins; a delayed pre-delete upsert cannot resurrect a Delisted card).
   */
  sourceUpdatedAt: timestamp('source_updated_at', { withTimezone: true, precision: 3 }),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

export const projectCards = catalog.table('project_cards', {
  id: uuid('id').primaryKey(), // = chessboard project id (stable for favorites/selections)
  developerId: uuid('developer_id').notNull(),
  name: text('name').notNull(),
  city: text('city').notNull(),
  status: text('status', { enum: CARD_STATUSES }).notNull(),
  freeCount: integer('free_count').notNull().default(0),
  ...cardSourceColumns(),
}, (t) => [
  check('ck_project_cards_status', cardStatusCheck(t.status)),
  // DelistedRetentionJob phase B scan
  index('ix_project_cards_delisted_updated_at').on(t.updatedAt).where(sql`status = 'Delisted'`),
]);

export const propertyObjectCards = catalog.table('property_object_cards', {
  id: uuid('id').primaryKey(), // = chessboard property object id
  projectId: uuid('project_id').notNull(), // logical reference, no FK (INV-2)
  buildingId: uuid('building_id').notNull(),
  developerId: uuid('developer_id').notNull(),
  number: text('number').notNull(),
  floor: integer('floor').notNull(),
  rooms: integer('rooms').notNull(),
  area: numeric('area', { precision: 7, scale: 2, mode: 'number' }).notNull(),
  price: numeric('price', { precision: 14, scale: 2, mode: 'number' }).notNull(),
  saleStatus: text('sale_status').notNull(),
  status: text('status', { enum: CARD_STATUSES }).notNull(),
  ...cardSourceColumns(),
}, (t) => [
  check('ck_property_object_cards_status', cardStatusCheck(t.status)),
  index('ix_property_object_cards_delisted_updated_at').on(t.updatedAt).where(sql`status = 'Delisted'`),
  index('ix_property_object_cards_project').on(t.projectId),
]);

export const propertyObjectDisplayOverrides = catalog.table('property_object_display_overrides', {
  id: uuid('id').primaryKey(),
  propertyObjectId: uuid('property_object_id').notNull(),
  title: text('title'),
  badge: text('badge'),
  deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [index('ix_po_display_overrides_object').on(t.propertyObjectId)]);

export const buildingDisplayOverrides = catalog.table('building_display_overrides', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  buildingId: uuid('building_id').notNull(),
  displayName: text('display_name'),
  deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [index('ix_building_display_overrides_project').on(t.projectId)]);

export const developerRankingRules = catalog.table('developer_ranking_rules', {
  id: uuid('id').primaryKey(),
  developerId: uuid('developer_id').notNull(),
  projectId: uuid('project_id'),
  weight: numeric('weight', { precision: 6, scale: 2, mode: 'number' }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

/**
 * A status change consumed before the upsert that creates its card: the two travel on different topics,
 * so a backlog may deliver them in either order. Kept here (the newest per object) and applied by that
 * upsert when it is newer than the state the upsert carries; otherwise the card would keep the status
 * of the object's creation (e.g. Free for a Booked object) until its next status change.
 */
export const pendingStatusChanges = catalog.table('pending_status_changes', {
  propertyObjectId: uuid('property_object_id').primaryKey(),
  toStatus: text('to_status').notNull(),
  sourceVersion: integer('source_version').notNull(),
  statusChangedAt: timestamp('status_changed_at', { withTimezone: true, precision: 3 }).notNull(),
  receivedAt: timestamp('received_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

export const catalogInbox = inboxTable(catalog);
