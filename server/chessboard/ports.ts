import type { SQL } from 'drizzle-orm';

/**
 * What the chessboard needs from other contexts, as functions the composition root plugs in at start-up
 * (server/main/registry.ts). The chessboard sits below crm (crm's lists filter by its objects), so it
 * cannot import crm for the one answer it needs from there.
 */

/**
 * The tenants (developers) of an investor's deals, as a sub-select to put after `IN`: an investor reads
 * the projects of those developers (it books a flat for its deal there). crm owns the query.
 */
export type InvestorTenants = (investorId: string) => SQL;

let investorTenants: InvestorTenants | null = null;

export function provideInvestorTenants(fn: InvestorTenants): void {
  investorTenants = fn;
}

export function investorTenantsOf(investorId: string): SQL {
  if (!investorTenants) throw new Error('the chessboard has no investor scope: the process entry imports server/main/registry.ts');
  return investorTenants(investorId);
}
