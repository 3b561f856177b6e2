import type { ChessboardPayload } from '../contracts/chessboard';
import type { ConsumerDefinition, HandlerOutcome } from '../platform/kafka/consumer-runner';
import { CONSUMER_GROUPS, TOPICS } from '../platform/kafka/topics';
import {
  applyProjectDeleted, applyProjectUpserted, applyPropertyObjectDeleted, applyPropertyObjectStatusChanged,
  applyPropertyObjectUpserted, type ProjectionOutcome,
} from './card-projection';

const NO_OP_DETAIL = {
  stale: 'stale: the card already reflects a newer source state',
  'delisted-frozen': 'INV-7 DelistedFrozen: the card is Delisted and the event does not restore it',
  'unknown-card': 'unknown card: nothing to change (a status change is kept for the upsert that creates the card)',
} as const;

function toHandlerOutcome(outcome: ProjectionOutcome): HandlerOutcome {
  const { decision } = outcome;
  if (decision.kind === 'no-op') return { result: 'no-op', detail: NO_OP_DETAIL[decision.reason] };
  if (decision.kind === 'update' && decision.restored) return { result: 'applied', detail: `restored: Delisted → ${decision.status}` };
  if (outcome.cascaded !== undefined) return { result: 'applied', detail: `INV-5 CascadeHide: ${outcome.cascaded} object card(s) delisted` };
  return { result: 'applied' };
}

/**
 * Card projection: keeps catalog.property_object_cards and catalog.project_cards in step with
 * chessboard (upserts publish, deletes delist, status changes move the sale status). The runner
 * dedups by messageId in catalog.inbox and commits the offset after this transaction; ordering
 * across topics is handled by the source version / source time kept on each card.
 */
export const cardProjectionConsumer: ConsumerDefinition = {
  name: CONSUMER_GROUPS.catalogCardProjection,
  inbox: 'catalog',
  topics: [
    TOPICS.propertyObjectUpserted,
    TOPICS.propertyObjectDeleted,
    TOPICS.propertyObjectStatusChanged,
    TOPICS.projectUpserted,
    TOPICS.projectDeleted,
  ],
  async handle(tx, { topic, envelope }) {
    switch (topic) {
      case TOPICS.propertyObjectUpserted:
        return toHandlerOutcome(await applyPropertyObjectUpserted(tx, envelope.payload as ChessboardPayload<typeof topic>));
      case TOPICS.propertyObjectDeleted:
        return toHandlerOutcome(await applyPropertyObjectDeleted(tx, envelope.payload as ChessboardPayload<typeof topic>));
      case TOPICS.propertyObjectStatusChanged:
        return toHandlerOutcome(await applyPropertyObjectStatusChanged(tx, envelope.payload as ChessboardPayload<typeof topic>));
      case TOPICS.projectUpserted:
        return toHandlerOutcome(await applyProjectUpserted(tx, envelope.payload as ChessboardPayload<typeof topic>));
      case TOPICS.projectDeleted:
        return toHandlerOutcome(await applyProjectDeleted(tx, envelope.payload as ChessboardPayload<typeof topic>));
      default:
        return { result: 'no-op', detail: `topic ${topic} is not projected` };
    }
  },
};
