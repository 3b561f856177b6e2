import { sql } from 'drizzle-orm';
import { bigserial, check, index, jsonb, pgSchema, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { inboxTable } from '../platform/outbox/table';

/** Bounded context `messenger` (ADR-0055 mini-messenger): deal chats, system cards and participants' messages. */
export const messenger = pgSchema('messenger');

/** The card types a booking event becomes (one card per event; the UI renders ru/en text from type + data). */
export const CARD_TYPES = [
  'booking-created', 'booking-confirmed', 'booking-paid', 'booking-extended', 'reserve-expired', 'booking-expired',
  'booking-cancelled', 'deal-cancelled', 'sale-started',
] as const;
export type CardType = (typeof CARD_TYPES)[number];

export const MESSAGE_KINDS = ['card', 'message'] as const;

/** One chat per deal, opened by the first event of the deal; the tenant and the deal's agent come from the events. */
export const dealChats = messenger.table('deal_chats', {
  dealId: uuid('deal_id').primaryKey(), // = crm deal id (logical reference, no FK)
  tenantId: uuid('tenant_id').notNull(),
  /** the deal's agent as the booking-created event names it (null until an event names it) */
  agentId: uuid('agent_id'),
  /** the deal's investor as booking-created names it (null if none): a participant who reads the chat */
  investorId: uuid('investor_id'),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  lastMessageAt: timestamp('last_message_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [index('ix_deal_chats_tenant').on(t.tenantId, t.lastMessageAt)]);

/**
 * The chat's entries, oldest first by id: system cards (kind 'card': card_type + card data, from one
 * Kafka message each — source_message_id unique) and participants' messages (kind 'message': author + text).
 */
export const messages = messenger.table('messages', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  tenantId: uuid('tenant_id').notNull(),
  dealId: uuid('deal_id').notNull(),
  bookingId: uuid('booking_id'),
  kind: text('kind', { enum: MESSAGE_KINDS }).notNull(),
  cardType: text('card_type', { enum: CARD_TYPES }),
  card: jsonb('card').$type<Record<string, unknown>>(),
  /** the Kafka messageId a card was made from: a second card from one event is impossible */
  sourceMessageId: uuid('source_message_id').unique(),
  /**
   * The business key of a card (the spec: idempotent by MessageId + business key): one card per booking
   * and type (per bookingVersion for extensions), so an event re-published under a new messageId (ops
   * reconciliation) does not make a second card.
   */
  cardKey: text('card_key').unique(),
  authorId: uuid('author_id'),
  authorRole: text('author_role'),
  text: text('text'),
  /** when it happened (the event's occurredAt for a card; the post time for a message) */
  occurredAt: timestamp('occurred_at', { withTimezone: true, precision: 3 }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
}, (t) => [
  check('ck_messages_kind', sql`${t.kind} IN ('card', 'message')`),
  check('ck_messages_shape', sql`(${t.kind} = 'card' AND ${t.cardType} IS NOT NULL AND ${t.sourceMessageId} IS NOT NULL AND ${t.cardKey} IS NOT NULL)
    OR (${t.kind} = 'message' AND ${t.authorId} IS NOT NULL AND ${t.text} IS NOT NULL AND char_length(${t.text}) BETWEEN 1 AND 2000)`),
  index('ix_messages_deal').on(t.dealId, t.id),
]);

/** The inbox of messenger's consumer (messenger.deal-chat). */
export const messengerInbox = inboxTable(messenger);
