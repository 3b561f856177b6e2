import type { Tx } from '../../platform/db';
import { correlationIdOf } from '../../contracts/correlation-id';
import { canSeeTenant, type Actor } from '../../auth/actor';
import { AppError, ValidationError } from '../../platform/errors';
import { auditLog } from '../../ops/schema';

/** Inputs every chessboard command accepts besides its own fields. */
export interface CommandMeta {
  /** ctx.correlationId of the request (a fresh id if absent) */
  correlationId?: string;
  /** the moment of the command (tests pass it; default: now) */
  now?: Date;
}

export const metaOf = (m: CommandMeta) => ({ correlationId: correlationIdOf(m.correlationId), at: m.now ?? new Date() });

export const notFound = (what: 'PROJECT' | 'BUILDING' | 'PROPERTY_OBJECT', id: string) =>
  new AppError(`CHESSBOARD_${what}_NOT_FOUND`, 'NOT_FOUND', `${what.toLowerCase().replace('_', ' ')} ${id} not found`);

/** Roles that may change a status by hand (manual release, hide/show): not agents, not viewers. */
const MANUAL_STATUS_ROLES = new Set<Actor['role']>(['ops', 'pin_manager', 'developer_manager', 'system']);

export function assertMayChangeStatusManually(actor: Actor): void {
  if (!MANUAL_STATUS_ROLES.has(actor.role)) {
    throw new AppError('CHESSBOARD_FORBIDDEN', 'FORBIDDEN', `role ${actor.role} may not change a property object status by hand`);
  }
}

/** A row of another tenant looks like a missing one. */
export function assertVisible(actor: Actor | undefined, tenantId: string, err: AppError): void {
  if (actor && !canSeeTenant(actor, tenantId)) throw err;
}

export function requiredReason(reason: string | undefined | null): string {
  const r = reason?.trim() ?? '';
  if (!r) throw new ValidationError('reason', 'a reason is required');
  if (r.length > 500) throw new ValidationError('reason', 'at most 500 characters');
  return r;
}

export function requiredText(field: string, value: string, max = 200): string {
  const v = value?.trim() ?? '';
  if (!v) throw new ValidationError(field, 'required');
  if (v.length > max) throw new ValidationError(field, `at most ${max} characters`);
  return v;
}

export async function writeAudit(
  tx: Tx,
  e: { actor: Actor; action: string; targetType: string; targetId: string; reason?: string | null; details?: Record<string, unknown>; at: Date },
): Promise<void> {
  await tx.insert(auditLog).values({
    at: e.at, actorId: e.actor.userId, action: e.action, targetType: e.targetType, targetId: e.targetId,
    reason: e.reason ?? null, details: e.details ?? null,
  });
}
