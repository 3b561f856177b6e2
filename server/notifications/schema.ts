import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, check, index, integer, jsonb, pgSchema, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { inboxTable } from '../platform/outbox/table';

export const notificationsSchema = pgSchema('notifications');

/** What a notification says: one per crm booking/deal event, plus the job's "deadline soon". */
export const NOTIFICATION_TYPES = [
  'BookingCreated', 'BookingConfirmed', 'BookingPaid', 'BookingExtended', 'BookingExpired', 'BookingCancelled',
  'DealCancelled', 'DealSaleStarted', 'DeadlineSoon',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Audiences a row can address besides one user: the tenant's developer managers (resolved when read). */
export const NOTIFICATION_AUDIENCES = ['developer_manager'] as const;

/**
 * One row per recipient per event (ARCHITECTURE.md "Notifications"). `recipient` is `user:<id>` (the
 * booking's creator, named by the event) or `role:developer_manager` (every developer manager of the
 * tenant: notifications does not read auth's users, so the audience is resolved by the viewer's role
 * and tenant when read). Unique (message_id, recipient): exactly one per event and recipient, also on
 * replay. Read state is per user in `reads`.
 */
export const notifications = notificationsSchema.table('notifications', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  /** the crm event's messageId; for DeadlineSoon a uuid derived from (booking, deadline) */
  messageId: uuid('message_id').notNull(),
  recipient: text('recipient').notNull(),
  recipientUserId: uuid('recipient_user_id'),
  audienceRole: text('audience_role', { enum: NOTIFICATION_AUDIENCES }),
  tenantId: uuid('tenant_id').notNull(),
  type: text('type', { enum: NOTIFICATION_TYPES }).notNull(),
  bookingId: uuid('booking_id'),
  dealId: uuid('deal_id').notNull(),
  data: jsonb('data').notNull().default({}),
  occurredAt: timestamp('occurred_at', { withTimezone: true, precision: 3 }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('ux_notifications_message_recipient').on(t.messageId, t.recipient),
  check('ck_notifications_recipient', sql`(${t.recipientUserId} IS NOT NULL) <> (${t.audienceRole} IS NOT NULL)`),
  index('ix_notifications_user').on(t.recipientUserId, t.id).where(sql`recipient_user_id IS NOT NULL`),
  index('ix_notifications_audience').on(t.tenantId, t.audienceRole, t.id).where(sql`audience_role IS NOT NULL`),
  index('ix_notifications_booking').on(t.bookingId),
  index('ix_notifications_created_at').on(t.createdAt),
]);

/** Per-user read state (a row = read). */
export const notificationReads = notificationsSchema.table('reads', {
  notificationId: bigint('notification_id', { mode: 'number' }).notNull().references(() => notifications.id, { onDelete: 'cascade' }),
  userId: uuid('user_id').notNull(),
  readAt: timestamp('read_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [
  primaryKey({ name: 'notifications_reads_pk', columns: [t.notificationId, t.userId] }),
  index('ix_notification_reads_user').on(t.userId),
]);

/**
 * notifications' own projection of the active holds' deadlines, fed by the crm events (never crm's
 * tables): what the deadline-soon job scans. `version` = the highest bookingVersion applied (an older
 * event arriving late changes nothing); `ended` once the booking expired, was cancelled or sold.
 * `soonNotifiedDeadline` = the deadline a DeadlineSoon was made for (exactly once per deadline).
 */
export const holdDeadlines = notificationsSchema.table('hold_deadlines', {
  bookingId: uuid('booking_id').primaryKey(),
  tenantId: uuid('tenant_id').notNull(),
  dealId: uuid('deal_id').notNull(),
  propertyObjectId: uuid('property_object_id').notNull(),
  createdBy: uuid('created_by'),
  /** the deal's investor as booking-created names it: a recipient of the booking's later notices */
  investorId: uuid('investor_id'),
  phase: text('phase', { enum: ['Reserve', 'Booking'] }),
  deadline: timestamp('deadline', { withTimezone: true, precision: 3 }),
  version: integer('version').notNull(),
  ended: boolean('ended').notNull().default(false),
  soonNotifiedDeadline: timestamp('soon_notified_deadline', { withTimezone: true, precision: 3 }),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [
  check('ck_hold_deadlines_phase', sql`${t.phase} IS NULL OR ${t.phase} IN ('Reserve', 'Booking')`),
  index('ix_hold_deadlines_active').on(t.deadline).where(sql`NOT ended`),
]);

export const notificationsInbox = inboxTable(notificationsSchema);
