import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { messengerInbox } from './schema';

/**
 * Inbox replay (messenger.inbox is messenger's): forget that a consumer of messenger rejected a message,
 * so a copy requeued from the DLQ is applied instead of being dropped as a duplicate. Only a
 * 'rejected' row is removed — an applied message stays deduplicated. Ops' DLQ requeue calls it.
 */
export async function forgetRejectedMessage(tx: DbOrTx, input: { consumer: string; messageId: string }): Promise<void> {
  await tx.delete(messengerInbox).where(and(eq(messengerInbox.consumer, input.consumer), eq(messengerInbox.messageId, input.messageId), eq(messengerInbox.result, 'rejected')));
}
