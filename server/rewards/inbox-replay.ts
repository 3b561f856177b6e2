import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { rewardsInbox } from './schema';

/**
 * Inbox replay (rewards.inbox is rewards'): forget that rewards' consumer rejected a message, so a copy
 * requeued from the DLQ is applied instead of being dropped as a duplicate. Only a 'rejected' row is
 * removed — an applied message stays deduplicated. Ops' DLQ requeue calls it.
 */
export async function forgetRejectedMessage(tx: DbOrTx, input: { consumer: string; messageId: string }): Promise<void> {
  await tx.delete(rewardsInbox).where(and(eq(rewardsInbox.consumer, input.consumer), eq(rewardsInbox.messageId, input.messageId), eq(rewardsInbox.result, 'rejected')));
}
