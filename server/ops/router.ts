import { z } from 'zod';
import { authedProcedure, router } from '../trpc/init';
import { getSagaTimeline } from './saga-timeline';
import { opsDashboardRouter } from './dashboard/router';

export const opsRouter = router({
  /**
   * The saga timeline of one booking (read-only, cross-schema). Every signed-in role may read the
   * timeline of a booking it can see: the tenant filter makes a foreign booking NOT_FOUND.
   */
  bookingTimeline: authedProcedure
    .input(z.object({ bookingId: z.uuid() }))
    .query(({ ctx, input }) => getSagaTimeline(ctx.database.db, ctx.actor, input.bookingId)),

  /** The operations dashboard (reads: ops, PIN manager, viewer; actions: ops). */
  dashboard: opsDashboardRouter,
});
