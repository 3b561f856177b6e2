import { and, eq, isNull } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db';
import { holdMismatches } from '../schema';

export interface ResolveHoldMismatchInput {
  /** the refused crm message (INV-CHS-003) whose DLQ record an operator decided */
  messageId: string;
  at: Date;
}

/**
 * Marks the hold mismatches recorded for a message resolved (INV-CHS-003): ops calls it when an
 * operator requeues or discards the message's DLQ record. Already resolved rows keep their time.
 */
export async function resolveHoldMismatch(tx: DbOrTx, input: ResolveHoldMismatchInput): Promise<void> {
  await tx.update(holdMismatches).set({ resolvedAt: input.at })
    .where(and(eq(holdMismatches.messageId, input.messageId), isNull(holdMismatches.resolvedAt)));
}
