import { sql } from 'drizzle-orm';
import type { Tx } from '../platform/db';
import type { ConsumedMessage, ConsumerDefinition, HandlerOutcome } from '../platform/kafka/consumer-runner';
import { RejectMessage } from '../platform/kafka/consumer-runner';
import { CONSUMER_GROUPS } from '../contracts/consumer-groups';
import type { Logger } from '../platform/logger';
import { cardOf, MESSENGER_CONSUMED_TOPICS, type MessengerTopic } from './card';
import { MESSENGER_ERRORS } from './errors';
import { notifyChat } from './live';
import { messengerCards } from './metrics';
import { dealChats, messages } from './schema';

/**
 * Consumer `messenger.deal-chat`: every crm booking / deal event becomes exactly one system card in the
 * deal's chat (spec crm-booking-saga: "messenger карточка брони", «договор оплачен», «время резерва
 * истекло, подтвердите бронь», «подтвердите/продлите»; and a short card for the other transitions).
 * The runner owns the inbox (MessageId), the transaction and the offset; the card's business key
 * (one per booking and type) makes a re-published event a no-op too. The chat is opened by the first
 * event of its deal; everything it knows (tenant, agent, investor) comes from the events, never from crm's tables.
 */
export async function handleDealChatEvent(tx: Tx, message: ConsumedMessage, _ctx: { logger: Logger }): Promise<HandlerOutcome> {
  const { envelope } = message;
  const card = cardOf(message.topic as MessengerTopic, envelope.payload);
  if (card.tenantId !== envelope.tenantId) {
    messengerCards.inc({ card: card.type, result: 'rejected' });
    throw new RejectMessage(MESSENGER_ERRORS.TENANT_MISMATCH, `payload tenant ${card.tenantId} differs from the envelope's ${envelope.tenantId}`);
  }
  const occurredAt = new Date(envelope.occurredAt);

  // the chat of the deal: opened by its first event; a deal belongs to one tenant for ever
  const [chat] = await tx.execute<{ tenant_id: string }>(sql`
    INSERT INTO ${dealChats} (deal_id, tenant_id, agent_id, investor_id, created_at, last_message_at)
    VALUES (${card.dealId}, ${card.tenantId}, ${card.agentId}, ${card.investorId ?? null}, ${occurredAt.toISOString()}, ${occurredAt.toISOString()})
    ON CONFLICT (deal_id) DO UPDATE SET
      agent_id = COALESCE(EXCLUDED.agent_id, ${dealChats.agentId}),
      investor_id = COALESCE(EXCLUDED.investor_id, ${dealChats.investorId}),
      last_message_at = GREATEST(${dealChats.lastMessageAt}, EXCLUDED.last_message_at)
    WHERE ${dealChats.tenantId} = EXCLUDED.tenant_id
    RETURNING tenant_id`);
  if (!chat) {
    messengerCards.inc({ card: card.type, result: 'rejected' });
    throw new RejectMessage(MESSENGER_ERRORS.TENANT_MISMATCH, `deal ${card.dealId} has a chat in another tenant`);
  }

  const inserted = await tx.insert(messages).values({
    tenantId: card.tenantId,
    dealId: card.dealId,
    bookingId: card.bookingId,
    kind: 'card',
    cardType: card.type,
    card: card.data,
    cardKey: card.key,
    sourceMessageId: envelope.messageId,
    occurredAt,
  }).onConflictDoNothing({ target: messages.cardKey }).returning({ id: messages.id });
  if (inserted.length === 0) {
    messengerCards.inc({ card: card.type, result: 'no-op' });
    return { result: 'no-op', detail: `card ${card.key} already in the chat` };
  }
  await notifyChat(tx, card.tenantId, card.dealId);
  messengerCards.inc({ card: card.type, result: 'applied' });
  return { result: 'applied' };
}

export const dealChatConsumer: ConsumerDefinition = {
  name: CONSUMER_GROUPS.messengerDealChat,
  inbox: 'messenger',
  topics: [...MESSENGER_CONSUMED_TOPICS],
  handle: (tx, message, ctx) => handleDealChatEvent(tx, message, ctx),
};
