import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { canSeeTenant, tenantScope, type Actor } from '../../auth/actor';
import { AppError, ValidationError } from '../../platform/errors';
import { recordAudit } from '../../platform/audit';
import { lockPropertyObject } from '../property-object-persistence';
import { projects } from '../schema';

/**
 * The command's input through its zod schema. The first issue is answered as VALIDATION_ERROR with
 * `field: message`, the one message per field the console shows (the schemas carry those messages).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: z.input<S>): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new ValidationError(String(issue.path[0] ?? 'input'), issue.message);
}

/** A required trimmed text of at most `max` characters (names, numbers). */
export const requiredTextInput = (max = 200) =>
  z.string({ error: 'required' }).trim().min(1, { error: 'required' }).max(max, { error: `at most ${max} characters` });

/** The reason a person gives for a manual change (audited). */
export const reasonInput = z.string({ error: 'a reason is required' }).trim().min(1, { error: 'a reason is required' }).max(500, { error: 'at most 500 characters' });

/** An integer field with one message for any wrong value (missing, not a number, fractional, too small). */
export const integerInput = (message: string, min?: number) => {
  const int = z.number({ error: message }).int({ error: message });
  return min === undefined ? int : int.min(min, { error: message });
};

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
export function assertVisible(actor: Actor, tenantId: string, err: AppError): void {
  if (!canSeeTenant(actor, tenantId)) throw err;
}

/**
 * A person's status change is audited in ops.audit_log, which ops owns: through ops' audit
 * command, in the command's transaction.
 */
export const writeAudit = (tx: Tx, e: Parameters<typeof recordAudit>[1]): Promise<void> => recordAudit(tx, e);

/**
 * The object a command acts on, locked (FOR UPDATE). A missing object, one of another tenant than
 * `expectedTenantId` (when the command knows it), or one the actor may not see is the same NOT_FOUND.
 * The tenant is decided before the lock and is part of the locking statement, so another tenant's row is
 * never locked nor waited for: its answer and its timing are those of a random id.
 */
export async function lockVisiblePropertyObject(tx: Tx, actor: Actor, propertyObjectId: string, expectedTenantId?: string) {
  const scope = tenantScope(actor);
  if (scope !== null && expectedTenantId !== undefined && scope !== expectedTenantId) throw notFound('PROPERTY_OBJECT', propertyObjectId);
  const object = await lockPropertyObject(tx, propertyObjectId, expectedTenantId ?? scope ?? undefined);
  if (!object) throw notFound('PROPERTY_OBJECT', propertyObjectId);
  assertVisible(actor, object.tenantId, notFound('PROPERTY_OBJECT', propertyObjectId));
  return object;
}

/**
 * The tenant of a project the actor may see, read WITHOUT a lock — the check a command makes before it
 * locks anything by the project's id (its objects, its row). A missing project and another tenant's are
 * the same NOT_FOUND.
 */
export async function visibleProjectTenant(tx: Tx, actor: Actor, projectId: string): Promise<string> {
  const scope = tenantScope(actor);
  const [row] = await tx.select({ tenantId: projects.tenantId }).from(projects)
    .where(scope === null ? eq(projects.id, projectId) : and(eq(projects.id, projectId), eq(projects.tenantId, scope)));
  if (!row) throw notFound('PROJECT', projectId);
  return row.tenantId;
}
