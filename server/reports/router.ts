import { z } from 'zod';
import { listTenants } from '../auth/tenants';
import { roleProcedure, router } from '../trpc/init';
import { funnelOutput, funnelReport } from './funnel';
import { REPORT_ROLES, reportInput } from './input';

/**
 * reports: read-only figures for the people who run sales — a tenant's developer managers (their
 * tenant) and PIN managers (any tenant, or all). Everyone else: FORBIDDEN. The CSV export of the same
 * cohort is the route app/api/reports/bookings.csv (a file download, not a tRPC call).
 */
export const reportsRouter = router({
  funnel: roleProcedure(...REPORT_ROLES)
    .input(reportInput)
    .output(funnelOutput)
    .query(({ ctx, input }) => funnelReport(ctx.database.db, ctx.actor, input)),

  /** the tenants a PIN manager can choose from (a tenant's own managers see only their tenant) */
  tenants: roleProcedure('pin_manager')
    .output(z.array(z.object({ id: z.uuid(), name: z.string() })))
    .query(({ ctx }) => listTenants(ctx.database.db)),
});
