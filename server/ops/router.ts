import { z } from 'zod';
import { HOLD_RELEASE_ROLES } from '../chessboard/hold-release-roles';
import { commandProcedure } from '../trpc/command-procedure';
import { authedProcedure, router } from '../trpc/init';
import { releaseHoldChecked, releaseHoldInput, releaseHoldOutput, releaseLogFields, repairedBy } from './booking-repairs';
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

/**
 * Runbook "manual release of a stuck hold" from the chessboard drawer (ops, PIN manager; reason required);
 * the app router serves it as chessboard.releaseHold. The chessboard write side does the release, its
 * event, history, hold_releases and audit rows in one transaction. While crm still has an active booking
 * of the object the caller must choose what happens to it (booking-repairs.ts): cancel it too, or release
 * the chessboard only (a recorded divergence). The repair spans crm and chessboard, so it sits with ops.
 */
export const holdReleaseRouter = router({
  releaseHold: commandProcedure({
    name: 'chessboard.releaseHold', roles: HOLD_RELEASE_ROLES, logMessage: 'ops repair applied', input: releaseHoldInput, output: releaseHoldOutput,
    handler: (tx, input, cctx) => releaseHoldChecked(tx, { ...input, ...repairedBy(cctx) }), logFields: releaseLogFields,
  }),
});
