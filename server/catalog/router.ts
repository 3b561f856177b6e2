import { z } from 'zod';
import { publicProcedure, roleProcedure, router } from '../trpc/init';
import {
  getDelistedBacklog, getNextRetentionCandidates, getPublishedProjectCard, getPublishedPropertyObjectCard,
} from './queries';

const byId = z.object({ id: z.uuid() });
const opsProcedure = roleProcedure('ops', 'pin_manager', 'viewer');

/**
 * catalog router. `cardById` / `projectCardById` are the public storefront reads (no session): a
 * Delisted, Hidden or removed card answers NOT_FOUND (CATALOG_CARD_NOT_FOUND), which is how
 * favorites and selections that keep the id degrade gracefully. The backlog reads are for ops.
 */
export const catalogRouter = router({
  cardById: publicProcedure.input(byId).query(({ ctx, input }) => getPublishedPropertyObjectCard(ctx.database.db, input)),

  projectCardById: publicProcedure.input(byId).query(({ ctx, input }) => getPublishedProjectCard(ctx.database.db, input)),

  /** Delisted cards (all / past the retention cutoff) per kind, with the oldest updated_at. */
  delistedBacklog: opsProcedure.query(({ ctx }) =>
    getDelistedBacklog(ctx.database.db, { retentionPeriodMs: ctx.env.DELISTED_RETENTION_PERIOD_MS })),

  /** What a delisted-retention run started now would remove, and whether it fits in one run. */
  nextRetentionCandidates: opsProcedure.query(({ ctx }) =>
    getNextRetentionCandidates(ctx.database.db, {
      retentionPeriodMs: ctx.env.DELISTED_RETENTION_PERIOD_MS,
      batchSize: ctx.env.DELISTED_RETENTION_BATCH_SIZE,
      maxBatchesPerRun: ctx.env.DELISTED_RETENTION_MAX_BATCHES_PER_RUN,
    })),
});
