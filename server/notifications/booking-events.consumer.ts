import type { ConsumerDefinition } from '../platform/kafka/consumer-runner';
import { RejectMessage } from '../platform/kafka/consumer-runner';
import { CONSUMER_GROUPS } from '../contracts/consumer-groups';
import { applyBookingEvent, NOTIFICATION_TOPICS, toNotice, type NotificationTopic } from './booking-events';
import { notificationsCreated } from './metrics';

/**
 * Consumer `notifications.booking-events`: one notification per participant of the deal on every crm
 * booking/deal event (created, confirmed, paid, extended, expired, cancelled, deal cancelled, sale
 * started), and the projection of the holds' deadlines the deadline-soon job reads. The runner owns
 * the inbox (notifications.inbox), the transaction, the DLQ and the offset; rows are also unique per
 * (message, recipient), so a replay from offset 0 adds nothing.
 */
export const notificationsBookingEventsConsumer: ConsumerDefinition = {
  name: CONSUMER_GROUPS.notificationsBookingEvents,
  inbox: 'notifications',
  topics: [...NOTIFICATION_TOPICS],
  async handle(tx, { topic, envelope }) {
    const notice = toNotice(topic as NotificationTopic, envelope.payload);
    if (notice.tenantId !== envelope.tenantId) {
      throw new RejectMessage('NOTIFICATIONS_TENANT_MISMATCH', `payload tenant ${notice.tenantId} differs from the envelope's ${envelope.tenantId}`);
    }
    const created = await applyBookingEvent(tx, envelope, notice);
    notificationsCreated.inc({ type: notice.type }, created);
    if (created === 0) return { result: 'no-op', detail: 'notifications already exist for this message' };
    return { result: 'applied' };
  },
};
