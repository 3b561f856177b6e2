import { sql } from 'drizzle-orm';
import { bigserial, check, index, integer, pgSchema, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * profile: buyers' requisite sets (personal data). Only this context reads these tables; crm keeps the
 * id + version of the set a booking was made with and asks profile through its module API (module-api.ts).
 */
export const profile = pgSchema('profile');

export const requisiteSets = profile.table(
  'requisite_sets',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    currentVersion: integer('current_version').notNull().default(1),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** set when the fields were wiped on request (an erasure record says who and why) */
    erasedAt: timestamp('erased_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [index('ix_requisite_sets_tenant').on(t.tenantId, t.createdAt)],
);

/**
 * One row per version: a booking references the version it was made with. `ciphertext` is the whole
 * set, AES-256-GCM under `key_id` (crypto.ts); NULL once erased.
 */
export const requisiteSetVersions = profile.table(
  'requisite_set_versions',
  {
    setId: uuid('set_id').notNull().references(() => requisiteSets.id),
    version: integer('version').notNull(),
    ciphertext: text('ciphertext'),
    keyId: text('key_id'),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.setId, t.version] }),
    check('ck_requisite_set_versions_cipher', sql`(${t.ciphertext} IS NULL) = (${t.keyId} IS NULL)`),
  ],
);

/** Every read of a full set (reveal): who, when, why, which version, for which booking. Append-only. */
export const requisiteReads = profile.table(
  'requisite_reads',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    setId: uuid('set_id').notNull().references(() => requisiteSets.id),
    version: integer('version').notNull(),
    tenantId: uuid('tenant_id').notNull(),
    actorId: text('actor_id').notNull(),
    actorRole: text('actor_role').notNull(),
    bookingId: uuid('booking_id'),
    correlationId: uuid('correlation_id'),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** the reader's stated reason; every reveal gives one (NULL only on reads logged before reasons were asked) */
    reason: text('reason'),
  },
  (t) => [
    index('ix_requisite_reads_set').on(t.setId, t.at),
    // the reveal log filters by reader and by tenant, newest first
    index('ix_requisite_reads_actor').on(t.actorId, t.id),
    index('ix_requisite_reads_tenant').on(t.tenantId, t.id),
  ],
);

/** The record of an erasure: the set's id stays (bookings keep referencing it), its fields are gone. */
export const requisiteErasures = profile.table('requisite_erasures', {
  setId: uuid('set_id').primaryKey().references(() => requisiteSets.id),
  tenantId: uuid('tenant_id').notNull(),
  erasedBy: text('erased_by').notNull(),
  reason: text('reason').notNull(),
  erasedAt: timestamp('erased_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});
