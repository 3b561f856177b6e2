import { crmPropertyObjectStatusConsumer } from '../chessboard/crm-property-object-status.consumer';
import { cardProjectionConsumer } from '../catalog/card-projection.consumer';
import { crmPropertyObjectProjectionConsumer } from '../crm/property-object-projection.consumer';
import { dealChatConsumer } from '../messenger/deal-chat.consumer';
import { notificationsBookingEventsConsumer } from '../notifications/booking-events.consumer';
import type { ConsumerDefinition } from '../platform/kafka/consumer-runner';
import { rewardsBookingEventsConsumer } from '../rewards/booking-events.consumer';

/** Every Kafka consumer the worker runs. */
export const consumers: ConsumerDefinition[] = [crmPropertyObjectStatusConsumer, cardProjectionConsumer, crmPropertyObjectProjectionConsumer,
  dealChatConsumer, notificationsBookingEventsConsumer, rewardsBookingEventsConsumer];
