import { eq, sql, type SQL } from 'drizzle-orm';
import type { Actor } from '../../auth/actor';
import { crmTenantScope } from '../permissions';
import { bookingPrograms, bookings, deals } from '../schema';

/**
 * The scope predicate of a table for this actor; a foreign row looks exactly like a missing one. For
 * an investor: its deals, the bookings of its deals, and the programmes of the developers of its deals.
 */
export function tenantFilter(actor: Actor, column: typeof bookings.tenantId | typeof deals.tenantId | typeof bookingPrograms.tenantId): SQL | undefined {
  const scope = crmTenantScope(actor);
  if ('all' in scope) return undefined;
  if ('tenantId' in scope) return eq(column, scope.tenantId);
  if (column === deals.tenantId) return eq(deals.investorId, scope.investorId);
  if (column === bookings.tenantId) return investorBookings(scope.investorId);
  return sql`${bookingPrograms.tenantId} IN ${investorDealTenants(scope.investorId)}`;
}

/**
 * The developers (tenants) of an investor's deals, as a sub-select: what an investor may read outside
 * crm (the chessboard of those developers' projects, to choose a flat for its deal). crm owns the query;
 * the reader only puts it after `IN`.
 */
export const investorDealTenants = (investorId: string): SQL =>
  sql`(SELECT DISTINCT ${deals.tenantId} FROM ${deals} WHERE ${deals.investorId} = ${investorId})`;

/** The bookings of an investor's deals (the booking's deal_id is immutable, so a plain sub-select). */
export const investorBookings = (investorId: string): SQL =>
  sql`${bookings.dealId} IN (SELECT ${deals.id} FROM ${deals} WHERE ${deals.investorId} = ${investorId})`;
