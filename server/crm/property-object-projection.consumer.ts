import type { ConsumerDefinition, HandlerOutcome } from '../platform/kafka/consumer-runner';
import { dispatchChessboardEvent } from '../platform/kafka/dispatch-chessboard';
import { CONSUMER_GROUPS } from '../contracts/consumer-groups';
import { TOPICS } from '../platform/kafka/topics';
import { applyObjectDeleted, applyObjectStatusChanged, applyObjectUpserted } from './property-object-projection';
import type { ViewDecision } from './property-object-view';

const NO_OP_DETAIL = {
  stale: 'stale: crm.property_objects already reflects a newer chessboard version',
  'deleted-later': 'stale: the object was deleted after this change',
} as const;

function toOutcome(decision: ViewDecision): HandlerOutcome {
  return decision.kind === 'write' ? { result: 'applied' } : { result: 'no-op', detail: NO_OP_DETAIL[decision.reason] };
}

/**
 * crm's projection of property objects (DESIGN decision 8): keeps crm.property_objects (tenant,
 * project, sale status, deleted) in step with chessboard, so CreateBooking books only what it may
 * without reading chessboard's tables. Own consumer group, crm.inbox, DLQ `<group>.dlq`.
 */
export const crmPropertyObjectProjectionConsumer: ConsumerDefinition = {
  name: CONSUMER_GROUPS.crmPropertyObjectProjection,
  inbox: 'crm',
  topics: [TOPICS.propertyObjectUpserted, TOPICS.propertyObjectStatusChanged, TOPICS.propertyObjectDeleted],
  handle(tx, { topic, envelope }) {
    return dispatchChessboardEvent({
      [TOPICS.propertyObjectUpserted]: async (p) => toOutcome(await applyObjectUpserted(tx, p)),
      [TOPICS.propertyObjectStatusChanged]: async (p) => toOutcome(await applyObjectStatusChanged(tx, p)),
      [TOPICS.propertyObjectDeleted]: async (p) => toOutcome(await applyObjectDeleted(tx, p)),
    }, topic, envelope.payload);
  },
};
