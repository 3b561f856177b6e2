import { sql } from 'drizzle-orm';
import { bigserial, check, index, numeric, pgSchema, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import { inboxTable } from '../platform/outbox/table';

/** Bounded context `rewards`: the agents' rewards for paid bookings, fed by crm's booking events only. */
export const rewards = pgSchema('rewards');

export const ACCRUAL_STATUSES = ['accrued', 'payable', 'void'] as const;
export type AccrualStatus = (typeof ACCRUAL_STATUSES)[number];

/**
 * One row per paid booking (booking_id unique; message_id = the booking-paid that made it): a replay
 * from offset 0 or a duplicate send adds nothing. accrued → payable when the sale starts, → void when
 * the booking is cancelled or expires before it. The amount is the one crm computed from the
 * programme's reward rule (carried in booking-paid with the rule and the price it used).
 */
export const accruals = rewards.table('accruals', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  bookingId: uuid('booking_id').notNull(),
  tenantId: uuid('tenant_id').notNull(),
  dealId: uuid('deal_id').notNull(),
  propertyObjectId: uuid('property_object_id').notNull(),
  agentId: uuid('agent_id'),
  ruleKind: text('rule_kind', { enum: ['percent', 'fixed'] }),
  ruleValue: numeric('rule_value', { precision: 14, scale: 2, mode: 'number' }),
  price: numeric('price', { precision: 14, scale: 2, mode: 'number' }),
  amount: numeric('amount', { precision: 14, scale: 2, mode: 'number' }).notNull(),
  status: text('status', { enum: ACCRUAL_STATUSES }).notNull(),
  messageId: uuid('message_id').notNull(),
  paidAt: timestamp('paid_at', { withTimezone: true, precision: 3 }).notNull(),
  payableAt: timestamp('payable_at', { withTimezone: true, precision: 3 }),
  voidedAt: timestamp('voided_at', { withTimezone: true, precision: 3 }),
  voidReason: text('void_reason'),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [
  unique('accruals_booking_id_unique').on(t.bookingId),
  unique('accruals_message_id_unique').on(t.messageId),
  check('ck_accruals_status', sql`${t.status} IN ('accrued', 'payable', 'void')`),
  check('ck_accruals_amount', sql`${t.amount} >= 0`),
  index('ix_accruals_agent').on(t.agentId, t.createdAt),
  index('ix_accruals_tenant').on(t.tenantId, t.agentId),
]);

/**
 * How a booking ended, as its later event said (sale started → payable; cancelled/expired → void).
 * Booking events travel on different topics, so the ending can arrive before booking-paid: the accrual
 * made later starts in the state remembered here.
 */
export const bookingEndings = rewards.table('booking_endings', {
  bookingId: uuid('booking_id').primaryKey(),
  tenantId: uuid('tenant_id').notNull(),
  outcome: text('outcome', { enum: ['payable', 'void'] }).notNull(),
  reason: text('reason'),
  at: timestamp('at', { withTimezone: true, precision: 3 }).notNull(),
  messageId: uuid('message_id').notNull(),
}, (t) => [check('ck_booking_endings_outcome', sql`${t.outcome} IN ('payable', 'void')`)]);

/** The inbox of rewards' consumer (rewards.booking-events). */
export const rewardsInbox = inboxTable(rewards);
