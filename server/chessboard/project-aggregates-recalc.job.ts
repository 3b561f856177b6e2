import { asc, eq, lte, sql } from 'drizzle-orm';
import type { PlatformEnv } from '../platform/env';
import type { JobContext, JobDefinition, JobSummary } from '../platform/jobs/types';
import type { ChessboardEnv } from './env';
import { TOPICS } from '../platform/kafka/topics';
import { writeOutbox } from '../platform/outbox/write';
import { projectAggregatesRecalculated } from './metrics';
import { projects, propertyObjects } from './schema';

type ChessboardJobEnv = PlatformEnv & ChessboardEnv;

/**
 * Job `project-aggregates-recalc`: handles ProjectAggregatesRecalcRequested with a debounce. Every
 * transition marks its project (`aggregates_recalc_requested_at`, earliest request wins); once a
 * request is older than AGGREGATES_RECALC_DEBOUNCE_MS (30 s) the counts are recomputed from
 * property_objects in one pass, so a burst of transitions costs one recount and one event.
 *
 * The recount happens under the project row lock. Writers of a request always take that lock
 * (requestProjectAggregatesRecalc), so a transition committed after the count re-requests instead of
 * being cleared with the stale count. A changed count bumps the project version and publishes
 * pin.chessboard.project-upserted.v1 (the catalog card's free count follows). Idempotent: a cleared
 * request is not picked again.
 */

export interface ProjectAggregatesRecalcSummary extends JobSummary {
  ProjectsRecalculated: number;
  ProjectsChanged: number;
}

const PROJECTS_PER_CYCLE = 500;

export function createProjectAggregatesRecalcJob(opts: { now?: () => Date } = {}): JobDefinition<ChessboardJobEnv> {
  return {
    name: 'project-aggregates-recalc',
    schedule: (env) => ({ cron: env.AGGREGATES_RECALC_SCHEDULE, timezone: 'UTC' }),
    isIdle: (s) => s.ProjectsRecalculated === 0,
    async run(ctx: JobContext<ChessboardJobEnv>): Promise<ProjectAggregatesRecalcSummary> {
      const at = opts.now?.() ?? new Date();
      const due = new Date(at.getTime() - ctx.env.AGGREGATES_RECALC_DEBOUNCE_MS);
      const { db } = ctx.database;
      const summary: ProjectAggregatesRecalcSummary = { ProjectsRecalculated: 0, ProjectsChanged: 0 };
      const candidates = await db
        .select({ id: projects.id })
        .from(projects)
        .where(lte(projects.aggregatesRecalcRequestedAt, due)) // ix_projects_recalc_requested
        .orderBy(asc(projects.aggregatesRecalcRequestedAt))
        .limit(PROJECTS_PER_CYCLE);

      for (const { id } of candidates) {
        if (ctx.signal.aborted) break;
        await db.transaction(async (tx) => {
          // another instance recounting this project holds the lock: leave it to that instance
          const [p] = await tx.select().from(projects).where(eq(projects.id, id)).for('update', { skipLocked: true });
          if (!p || !p.aggregatesRecalcRequestedAt || p.aggregatesRecalcRequestedAt > due) return;
          const [c] = await tx
            .select({
              total: sql<number>`count(*)::int`,
              free: sql<number>`count(*) FILTER (WHERE ${propertyObjects.status} = 'Free')::int`,
              held: sql<number>`count(*) FILTER (WHERE ${propertyObjects.status} IN ('Reserved', 'Booked'))::int`,
              sold: sql<number>`count(*) FILTER (WHERE ${propertyObjects.status} = 'Sold')::int`,
            })
            .from(propertyObjects)
            .where(eq(propertyObjects.projectId, id));
          const changed = p.deletedAt === null && (
            c.total !== p.propertyObjectsTotalCount || c.free !== p.propertyObjectsFreeCount
            || c.held !== p.propertyObjectsHeldCount || c.sold !== p.propertyObjectsSoldCount);
          const version = changed ? p.version + 1 : p.version;
          await tx
            .update(projects)
            .set({
              propertyObjectsTotalCount: c.total,
              propertyObjectsFreeCount: c.free,
              propertyObjectsHeldCount: c.held,
              propertyObjectsSoldCount: c.sold,
              aggregatesRecalcRequestedAt: null,
              aggregatesRecalculatedAt: at,
              version,
              ...(changed ? { updatedAt: at } : {}),
            })
            .where(eq(projects.id, id));
          summary.ProjectsRecalculated += 1;
          projectAggregatesRecalculated.inc({ changed: String(changed) });
          if (!changed) return;
          summary.ProjectsChanged += 1;
          await writeOutbox(tx, 'chessboard', {
            topic: TOPICS.projectUpserted,
            aggregateType: 'Project',
            aggregateId: p.id,
            tenantId: p.tenantId,
            correlationId: ctx.runId,
            occurredAt: at,
            payload: {
              projectId: p.id, tenantId: p.tenantId, name: p.name, city: p.city,
              propertyObjectsFreeCount: c.free, version, updatedAt: at.toISOString(),
            },
          });
        });
      }
      if (summary.ProjectsRecalculated > 0) ctx.logger.info({ runId: ctx.runId, ...summary }, 'project aggregates recalculated');
      return summary;
    },
  };
}

export const projectAggregatesRecalcJob = createProjectAggregatesRecalcJob();
