import { eq, type SQL } from 'drizzle-orm';
import type { Actor } from '../../auth/actor';
import { crmTenantScope } from '../permissions';
import type { bookingPrograms, bookings, deals } from '../schema';

/** The tenant predicate of a table for this actor; a foreign row looks exactly like a missing one. */
export function tenantFilter(actor: Actor, column: typeof bookings.tenantId | typeof deals.tenantId | typeof bookingPrograms.tenantId): SQL | undefined {
  const scope = crmTenantScope(actor);
  return 'all' in scope ? undefined : eq(column, scope.tenantId);
}
