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

/** An agent sees only the sets it created; everyone else allowed at all sees the tenant's. */
export const ownerScope = (actor: Actor): string | null => (actor.role === 'agent' ? actor.userId : null);
