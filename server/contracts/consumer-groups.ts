/**
 * The Kafka consumer groups of the system. A group id is a published name, like a topic's: it names the
 * group's dead-letter topic (`<group>.dlq`), the `dlq.consumer` header of what lands there and the
 * `ops.requeue-for` header of what ops sends back, so producers of those (the consumer runner, ops) and
 * the consumers themselves share it from here.
 */
export const CONSUMER_GROUPS = {
  crmPropertyObjectStatus: 'chessboard.crm-property-object-status',
  catalogCardProjection: 'catalog.card-projection',
  crmPropertyObjectProjection: 'crm.property-object-projection',
  messengerDealChat: 'messenger.deal-chat',
  notificationsBookingEvents: 'notifications.booking-events',
  rewardsBookingEvents: 'rewards.booking-events',
} as const;

export type ConsumerGroupId = (typeof CONSUMER_GROUPS)[keyof typeof CONSUMER_GROUPS];
