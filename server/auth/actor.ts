import type { USER_ROLES } from '../ops/schema';

export type Role = (typeof USER_ROLES)[number];

/** Who is calling. `tenantId` null = cross-tenant role (pin_manager, ops); system jobs use SYSTEM_ACTOR. */
export interface Actor {
  userId: string;
  role: Role | 'system';
  tenantId: string | null;
}

export const SYSTEM_ACTOR: Actor = { userId: 'system', role: 'system', tenantId: null };

/** Tenant filter of every query: null means all tenants (cross-tenant roles). */
export function tenantScope(actor: Actor): string | null {
  return actor.role === 'pin_manager' || actor.role === 'ops' || actor.role === 'system' ? null : actor.tenantId;
}

/** True if the actor may see rows of `tenantId`. A foreign row must look like a missing one (NOT_FOUND). */
export function canSeeTenant(actor: Actor, tenantId: string): boolean {
  const scope = tenantScope(actor);
  return scope === null || scope === tenantId;
}
