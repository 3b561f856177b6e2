import { AppError } from '../platform/errors';
import { USER_ROLES } from './roles';

/** The roles, for other contexts (crm labels a metric by them) that may not import auth's schema. */
export { USER_ROLES };
export type Role = (typeof USER_ROLES)[number];

/** Who is calling. `tenantId` null = cross-tenant role (pin_manager, ops); system jobs use SYSTEM_ACTOR. */
export interface Actor {
  userId: string;
  role: Role | 'system';
  tenantId: string | null;
}

export const SYSTEM_ACTOR: Actor = { userId: 'system', role: 'system', tenantId: null };

/**
 * Tenant filter of every query: null means all tenants (cross-tenant roles only). A tenant role without
 * a tenant is refused (FORBIDDEN), never widened to all tenants; the CHECK ck_users_tenant_role_has_tenant
 * keeps such a user out of auth.users as well.
 */
export function tenantScope(actor: Actor): string | null {
  if (actor.role === 'pin_manager' || actor.role === 'ops' || actor.role === 'system') return null;
  if (!actor.tenantId) throw new AppError('AUTH_TENANT_SCOPE_MISSING', 'FORBIDDEN', 'Your account has no tenant');
  return actor.tenantId;
}

/** True if the actor may see rows of `tenantId`. A foreign row must look like a missing one (NOT_FOUND). */
export function canSeeTenant(actor: Actor, tenantId: string): boolean {
  const scope = tenantScope(actor);
  return scope === null || scope === tenantId;
}
