import type { Actor } from '../auth/actor';
import type { DbOrTx } from '../platform/db';
import { auditLog } from './schema';

/** One hand-made action: who, what, on which target, why. */
export interface AuditEntry {
  actor: Actor;
  action: string;
  targetType: string;
  targetId: string;
  reason?: string | null;
  details?: Record<string, unknown>;
  at: Date;
}

/**
 * The audit command (issue #18): ops.audit_log is ops' table — the record of hand-made actions the ops
 * dashboard and reconciliation read — and every context that audits an action (chessboard's manual
 * release / hide / re-hold, ops' repairs) writes it through this, in its own transaction.
 */
export async function recordAudit(tx: DbOrTx, e: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({
    at: e.at, actorId: e.actor.userId, action: e.action, targetType: e.targetType, targetId: e.targetId,
    reason: e.reason ?? null, details: e.details ?? null,
  });
}
