import type { Actor, Role } from '../auth/actor';
import { crmError } from './errors';

/**
 * Who may run which crm command. The router gates with roleProcedure(...COMMAND_ROLES[c]) and every
 * command checks again (a command called from elsewhere is not a hole). ops and viewer are read-only.
 * Tenant scope is separate (`crmTenantScope`): a foreign tenant's row answers NOT_FOUND. An investor
 * books, uploads the paid programme's documents and cancels its own bookings on its own deals only (the
 * scope), and never confirms a booking or a payment (managers do).
 */
export const COMMAND_ROLES = {
  'booking.create': ['agent', 'investor', 'pin_manager'],
  'booking.uploadContract': ['developer_manager', 'investor', 'pin_manager'],
  'booking.uploadReceipt': ['developer_manager', 'investor', 'pin_manager'],
  'booking.confirm': ['agent', 'developer_manager', 'pin_manager'],
  'booking.confirmPayment': ['developer_manager', 'pin_manager'],
  'booking.extend': ['developer_manager', 'pin_manager'],
  // an agent or an investor cancels only the bookings it created (checked in the command)
  'booking.cancel': ['agent', 'developer_manager', 'investor', 'pin_manager'],
  'booking.startSale': ['developer_manager', 'pin_manager'],
  'deal.cancel': ['developer_manager', 'pin_manager'],
  // the agents' reward of a programme (a percentage of the price or a fixed sum): the developer's choice
  'program.setReward': ['developer_manager', 'pin_manager'],
  // ops repairs (manual release "cancel the crm booking too", reconciliation "cancel booking"): the same
  // cancel command, run by ops or a PIN manager from the ops side — not a booking router procedure
  'booking.cancelInRepair': ['ops', 'pin_manager'],
} as const satisfies Record<string, readonly Role[]>;

export type CrmCommandName = keyof typeof COMMAND_ROLES;

export const commandRoles = (command: CrmCommandName): Role[] => [...COMMAND_ROLES[command]];

export function authorize(actor: Actor, command: CrmCommandName): void {
  if (!(COMMAND_ROLES[command] as readonly string[]).includes(actor.role)) {
    throw crmError('CRM_FORBIDDEN', 'Your role does not allow this action', { command, role: actor.role });
  }
}

/** An actor's reach in crm: every tenant, one tenant, or (an investor) the deals whose investor_id is theirs. */
export type CrmScope = { all: true } | { tenantId: string } | { investorId: string };

/**
 * The tenant filter of crm (ADR-0052): null = every tenant (pin_manager, ops, system). A tenant-scoped
 * role without a tenant sees nothing rather than everything. An investor's deals may be with any
 * developer: its scope is its own deals (crm.deals.investor_id), whatever their tenant.
 */
export function crmTenantScope(actor: Actor): CrmScope {
  if (actor.role === 'pin_manager' || actor.role === 'ops' || actor.role === 'system') return { all: true };
  if (actor.role === 'investor') return { investorId: actor.userId };
  if (!actor.tenantId) throw crmError('CRM_FORBIDDEN', 'Your account is not attached to a tenant', { role: actor.role });
  return { tenantId: actor.tenantId };
}
