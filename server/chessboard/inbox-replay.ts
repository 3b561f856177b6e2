import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { chessboardInbox } from './schema';

/**
 * Inbox replay (chessboard.inbox is chessboard's): forget that a consumer of chessboard rejected a message,
 * so a copy requeued from the DLQ is applied instead of being dropped as a duplicate. Only a
 * 'rejected' row is removed — an applied message stays deduplicated. Ops' DLQ requeue calls it.
 */
export async function forgetRejectedMessage(tx: DbOrTx, input: { consumer: string; messageId: string }): Promise<void> {
  await tx.delete(chessboardInbox).where(and(eq(chessboardInbox.consumer, input.consumer), eq(chessboardInbox.messageId, input.messageId), eq(chessboardInbox.result, 'rejected')));
}
