import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { crmInbox } from './schema';

/**
 * Inbox replay (crm.inbox is crm's): forget that a consumer of crm rejected a message,
 * so a copy requeued from the DLQ is applied instead of being dropped as a duplicate. Only a
 * 'rejected' row is removed — an applied message stays deduplicated. Ops' DLQ requeue calls it.
 */
export async function forgetRejectedMessage(tx: DbOrTx, input: { consumer: string; messageId: string }): Promise<void> {
  await tx.delete(crmInbox).where(and(eq(crmInbox.consumer, input.consumer), eq(crmInbox.messageId, input.messageId), eq(crmInbox.result, 'rejected')));
}
