import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { notificationsInbox } from './schema';

/**
 * Inbox replay (notifications.inbox is notifications's): forget that a consumer of notifications rejected a message,
 * so a copy requeued from the DLQ is applied instead of being dropped as a duplicate. Only a
 * 'rejected' row is removed — an applied message stays deduplicated. Ops' DLQ requeue calls it.
 */
export async function forgetRejectedMessage(tx: DbOrTx, input: { consumer: string; messageId: string }): Promise<void> {
  await tx.delete(notificationsInbox).where(and(eq(notificationsInbox.consumer, input.consumer), eq(notificationsInbox.messageId, input.messageId), eq(notificationsInbox.result, 'rejected')));
}
