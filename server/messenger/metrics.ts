import { counter } from '../platform/metrics';
import { CARD_TYPES } from './schema';

/** Prometheus metrics of the messenger context. */
export const messengerCards = counter(
  'messenger_cards_total',
  'System cards of the deal chats by card type and result (applied: a new card; no-op: the card was already in the chat)',
  ['card', 'result'],
  { card: [...CARD_TYPES], result: ['applied', 'no-op', 'rejected'] },
);
export const messengerMessagesPosted = counter('messenger_messages_posted_total', 'Messages participants posted to deal chats');
