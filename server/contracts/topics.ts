/**
 * Every Kafka topic the system produces to or consumes from. Names are versioned (`.v1`): an
 * incompatible payload change gets a new topic instead of breaking existing consumers.
 * An environment-wide prefix (KAFKA_TOPIC_PREFIX) is applied on top via `withPrefix`.
 */
export const TOPICS = {
  bookingCreated: 'pin.crm.booking-created.v1',
  bookingConfirmed: 'pin.crm.booking-confirmed.v1',
  bookingPaid: 'pin.crm.booking-paid.v1',
  bookingExtended: 'pin.crm.booking-extended.v1',
  bookingExpired: 'pin.crm.booking-expired.v1',
  bookingCancelled: 'pin.crm.booking-cancelled.v1',
  dealCancelled: 'pin.crm.deal-cancelled.v1',
  dealSaleStarted: 'pin.crm.deal-sale-started.v1',
  propertyObjectStatusChanged: 'pin.chessboard.property-object-status-changed.v1',
  propertyObjectUpserted: 'pin.chessboard.property-object-upserted.v1',
  propertyObjectDeleted: 'pin.chessboard.property-object-deleted.v1',
  projectUpserted: 'pin.chessboard.project-upserted.v1',
  projectDeleted: 'pin.chessboard.project-deleted.v1',
} as const;

export type TopicKey = keyof typeof TOPICS;
export type TopicName = (typeof TOPICS)[TopicKey];
