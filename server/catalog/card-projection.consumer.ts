import type { ConsumerDefinition, HandlerOutcome } from '../platform/kafka/consumer-runner';
import { dispatchChessboardEvent } from '../platform/kafka/dispatch-chessboard';
import { CONSUMER_GROUPS } from '../contracts/consumer-groups';
import { TOPICS } from '../platform/kafka/topics';
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
  handle(tx, { topic, envelope }) {
    return dispatchChessboardEvent({
      [TOPICS.propertyObjectUpserted]: async (p) => toHandlerOutcome(await applyPropertyObjectUpserted(tx, p)),
      [TOPICS.propertyObjectDeleted]: async (p) => toHandlerOutcome(await applyPropertyObjectDeleted(tx, p)),
      [TOPICS.propertyObjectStatusChanged]: async (p) => toHandlerOutcome(await applyPropertyObjectStatusChanged(tx, p)),
      [TOPICS.projectUpserted]: async (p) => toHandlerOutcome(await applyProjectUpserted(tx, p)),
      [TOPICS.projectDeleted]: async (p) => toHandlerOutcome(await applyProjectDeleted(tx, p)),
    }, topic, envelope.payload);
  },
};
