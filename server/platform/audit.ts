import { bigserial, index, jsonb, pgSchema, text, timestamp } from 'drizzle-orm/pg-core';
import type { DbOrTx } from './db';

/**
 * The audit trail: who did what by hand (manual release, hide, re-hold, DLQ requeue/discard, job runs,
 * reconciliation repairs). Every context that audits an action writes it through recordAudit, in its own
 * transaction, so the audit row commits with the action. The table lives in the `ops` schema (the ops
 * dashboard and reconciliation read it; server/ops/schema.ts re-exports it) but belongs here, where every
 * context may reach it: a context importing ops for its audit made ops and the context import each other.
 */
const ops = pgSchema('ops');

export const auditLog = ops.table('audit_log', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  at: timestamp('at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  actorId: text('actor_id').notNull(),
  action: text('action').notNull(),
  targetType: text('target_type').notNull(),
  targetId: text('target_id').notNull(),
  reason: text('reason'),
  details: jsonb('details'),
}, (t) => [index('ix_audit_log_at').on(t.at)]);

/** One hand-made action: who, what, on which target, why. */
export interface AuditEntry {
  actor: { userId: string };
  action: string;
  targetType: string;
  targetId: string;
  reason?: string | null;
  details?: Record<string, unknown>;
  /** the action's time; the database's clock when left out */
  at?: Date;
}

export async function recordAudit(tx: DbOrTx, e: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({
    ...(e.at ? { at: e.at } : {}), actorId: e.actor.userId, action: e.action, targetType: e.targetType, targetId: e.targetId,
    reason: e.reason ?? null, details: e.details ?? null,
  });
}
