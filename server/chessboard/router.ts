import { z } from 'zod';
import { authedProcedure, roleProcedure, router } from '../trpc/init';
import {
  CATALOG_ACTION_ROLES, setObjectHiddenAction, setObjectHiddenInput, withdrawObjectAction, withdrawObjectInput, withdrawProjectAction, withdrawProjectInput,
} from './catalog-actions';
import { commandContext } from './commands';
import { getGrid, getObject, listBuildings, listProjects, objectLabels } from './queries';

/**
 * Read side of the chessboard for the console; every role reads, each within its tenant scope. The
 * drawer's releaseHold is ops' repair (server/ops/router.ts), served under this name by the app router.
 */
export const chessboardRouter = router({
  projects: authedProcedure.query(({ ctx }) => listProjects(ctx.database.db, ctx.actor)),
  buildings: authedProcedure
    .input(z.object({ projectId: z.uuid() }))
    .query(({ ctx, input }) => listBuildings(ctx.database.db, ctx.actor, input.projectId)),
  grid: authedProcedure
    .input(z.object({ buildingId: z.uuid() }))
    .query(({ ctx, input }) => getGrid(ctx.database.db, ctx.actor, input.buildingId)),
  object: authedProcedure
    .input(z.object({ propertyObjectId: z.uuid() }))
    .query(({ ctx, input }) => getObject(ctx.database.db, ctx.actor, input.propertyObjectId)),
  objectLabels: authedProcedure
    .input(z.object({ ids: z.array(z.uuid()).max(200) }))
    .query(({ ctx, input }) => objectLabels(ctx.database.db, ctx.actor, input.ids)),
  /** Catalog actions (developer manager, PIN manager; reason required, audited): see catalog-actions.ts. */
  setObjectHidden: roleProcedure(...CATALOG_ACTION_ROLES)
    .input(setObjectHiddenInput)
    .mutation(({ ctx, input }) =>
      ctx.database.db.transaction((tx) => setObjectHiddenAction(tx, input, commandContext(ctx.actor, ctx.correlationId))),
    ),
  withdrawObject: roleProcedure(...CATALOG_ACTION_ROLES)
    .input(withdrawObjectInput)
    .mutation(({ ctx, input }) =>
      ctx.database.db.transaction((tx) => withdrawObjectAction(tx, input, commandContext(ctx.actor, ctx.correlationId))),
    ),
  withdrawProject: roleProcedure(...CATALOG_ACTION_ROLES)
    .input(withdrawProjectInput)
    .mutation(({ ctx, input }) =>
      ctx.database.db.transaction((tx) => withdrawProjectAction(tx, input, commandContext(ctx.actor, ctx.correlationId))),
    ),
});
