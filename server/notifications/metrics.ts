import { counter } from '../platform/metrics';
import { NOTIFICATION_TYPES } from './schema';

/** Notification rows created (one per recipient), by type. */
export const notificationsCreated = counter('notifications_created_total', 'Notifications created (one per recipient and event), by type', ['type'], {
  type: [...NOTIFICATION_TYPES],
});
/** Read notifications removed by notifications-retention. */
export const notificationsPruned = counter('notifications_pruned_total', 'Read notifications older than the retention removed');
