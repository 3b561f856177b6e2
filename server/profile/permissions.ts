import type { Actor, Role } from '../auth/actor';
import { tenantScope } from '../auth/actor';
import { profileError } from './errors';

/**
 * Who may do what with requisite sets. The router gates with roleProcedure(...PROFILE_ROLES[a]) and
 * every command/query checks again. viewer and ops never see personal data. An agent works with the
 * sets it created (the sets of its deals' buyers); developer managers with every set of their tenant;
 * PIN managers with every tenant's.
 */
export const PROFILE_ROLES = {
  'profile.create': ['agent', 'developer_manager', 'pin_manager'],
  'profile.edit': ['agent', 'developer_manager', 'pin_manager'],
  'profile.list': ['agent', 'developer_manager', 'pin_manager'],
  'profile.reveal': ['agent', 'developer_manager', 'pin_manager'],
  'profile.erase': ['developer_manager', 'pin_manager'],
  // who read which set, when and why: ids and reasons only, never a field
  'profile.reveals': ['ops', 'pin_manager'],
} as const satisfies Record<string, readonly Role[]>;

export type ProfileAction = keyof typeof PROFILE_ROLES;

export const profileRoles = (action: ProfileAction): Role[] => [...PROFILE_ROLES[action]];

export function authorizeProfile(actor: Actor, action: ProfileAction): void {
  if (!(PROFILE_ROLES[action] as readonly string[]).includes(actor.role)) {
    throw profileError('PROFILE_FORBIDDEN', 'Your role does not allow this action', { action, role: actor.role });
  }
}

/** null = every tenant (pin_manager); a foreign set looks like a missing one */
export const profileTenantScope = (actor: Actor): string | null => tenantScope(actor);


/**
 * THE rule of who may use a set — reference it from a booking (crm asks module-api.ts), reveal it, edit or
 * erase it: its creator, and the managers of its tenant (developer managers of that tenant, PIN managers).
 * An agent uses only the sets it created; viewer and ops none. The same rule at reference time and at
 * reveal time, so a reference never opens a set to someone who could not read it, and a set nobody
 * allowed could reference cannot be held in use (erasure blocked) by someone who may not see it.
 * `system` (jobs, seeds) is trusted like a PIN manager.
 */
export function canUseRequisiteSet(actor: Actor, set: { tenantId: string; createdBy: string }): boolean {
  switch (actor.role) {
    case 'pin_manager':
    case 'system':
      return true;
    case 'developer_manager':
      return actor.tenantId !== null && set.tenantId === actor.tenantId;
    case 'agent':
      return actor.tenantId !== null && set.tenantId === actor.tenantId && set.createdBy === actor.userId;
    default:
      return false;
  }
}

