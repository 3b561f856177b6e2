import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { catalogInbox } from './schema';

/**
 * Inbox replay (catalog.inbox is catalog's): forget that a consumer of catalog rejected a message,
 * so a copy requeued from the DLQ is applied instead of being dropped as a duplicate. Only a
 * 'rejected' row is removed — an applied message stays deduplicated. Ops' DLQ requeue calls it.
 */
export async function forgetRejectedMessage(tx: DbOrTx, input: { consumer: string; messageId: string }): Promise<void> {
  await tx.delete(catalogInbox).where(and(eq(catalogInbox.consumer, input.consumer), eq(catalogInbox.messageId, input.messageId), eq(catalogInbox.result, 'rejected')));
}
