import { z } from 'zod';
import { commandProcedure } from '../trpc/command-procedure';
import { authedProcedure, router } from '../trpc/init';
import {
  CATALOG_ACTION_ROLES, setObjectHiddenAction, setObjectHiddenInput, setObjectHiddenOutput, withdrawObjectAction, withdrawObjectInput,
  withdrawObjectOutput, withdrawProjectAction, withdrawProjectInput, withdrawProjectOutput,
} from './catalog-actions';
import { getGrid, getObject, listBuildings, listProjects, objectLabels } from './queries';

const catalogAction = (name: string) => ({ name, roles: CATALOG_ACTION_ROLES, logMessage: 'chessboard catalog action applied' });
/** ids, statuses and versions only */
const objectLogFields = (r: { propertyObjectId: string; messageId: string | null; status?: string; version?: number }) => ({
  propertyObjectId: r.propertyObjectId, status: r.status, version: r.version, messageId: r.messageId,
});

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
  setObjectHidden: commandProcedure({ ...catalogAction('chessboard.setObjectHidden'), input: setObjectHiddenInput, output: setObjectHiddenOutput, handler: setObjectHiddenAction, logFields: objectLogFields }),
  withdrawObject: commandProcedure({ ...catalogAction('chessboard.withdrawObject'), input: withdrawObjectInput, output: withdrawObjectOutput, handler: withdrawObjectAction, logFields: objectLogFields }),
  withdrawProject: commandProcedure({
    ...catalogAction('chessboard.withdrawProject'), input: withdrawProjectInput, output: withdrawProjectOutput, handler: withdrawProjectAction,
    logFields: (r) => ({ projectId: r.projectId, deleted: r.deleted, deletedObjects: r.deletedObjects, messageId: r.messageId }),
  }),
});
