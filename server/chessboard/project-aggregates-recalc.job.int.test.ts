import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOPICS } from '../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { insertObjects, insertProject, jobContext, type Place } from '../../test/fixtures/chessboard.fixtures';
import { requestProjectAggregatesRecalc } from './property-object-persistence';
import { createPropertyObjectHoldExpirationJob } from './property-object-hold-expiration.job';
import { createProjectAggregatesRecalcJob, projectAggregatesRecalcJob, type ProjectAggregatesRecalcSummary } from './project-aggregates-recalc.job';

const T = new Date('2030-06-01T12:00:00.000Z');
const after = (ms: number) => () => new Date(T.getTime() + ms);

let t: TestContext;
let place: Place;
beforeEach(async () => {
  t = await createTestContext();
  place = await insertProject(t.database);
});
afterEach(async () => { await t?.close(); });

const run = (now: () => Date) => createProjectAggregatesRecalcJob({ now }).run(jobContext(t)) as Promise<ProjectAggregatesRecalcSummary>;
const request = (at = T) => t.database.db.transaction((tx) => requestProjectAggregatesRecalc(tx, [place.projectId], at));

async function project() {
  const [p] = await t.database.sql`SELECT * FROM chessboard.projects WHERE id = ${place.projectId}`;
  return p;
}
async function projectEvents() {
  return t.database.sql<{ payload: { correlationId: string; payload: Record<string, unknown> } }[]>`
    SELECT payload FROM chessboard.outbox WHERE topic = ${TOPICS.projectUpserted} AND aggregate_id = ${place.projectId} ORDER BY id`;
}

describe('project-aggregates-recalc', () => {
  it('debounces: a request younger than 30 s waits; then the counts are recomputed, the request cleared, version bumped, project-upserted published', async () => {
    await insertObjects(t.database, place, [
      { status: 'Free' }, { status: 'Free' }, { status: 'Free' }, { status: 'Reserved' }, { status: 'Booked' }, { status: 'Sold' }, { status: 'Hidden' },
    ]);
    await request();
    expect(await run(after(10_000))).toEqual({ ProjectsRecalculated: 0, ProjectsChanged: 0 });
    expect((await project()).aggregates_recalc_requested_at).not.toBeNull();

    const ctx = jobContext(t);
    const s = await createProjectAggregatesRecalcJob({ now: after(31_000) }).run(ctx);
    expect(s).toEqual({ ProjectsRecalculated: 1, ProjectsChanged: 1 });
    const p = await project();
    expect(p).toMatchObject({
      property_objects_free_count: 3, property_objects_total_count: 7, property_objects_held_count: 2, property_objects_sold_count: 1,
      aggregates_recalc_requested_at: null, version: 2,
    });
    const events = await projectEvents();
    expect(events).toHaveLength(1);
    expect(events[0].payload).toMatchObject({ correlationId: ctx.runId, payload: { projectId: place.projectId, tenantId: place.tenantId, propertyObjectsFreeCount: 3, version: 2 } });
  });

  it('is idempotent: a cleared request is not picked again; unchanged counts clear the request without an event', async () => {
    await insertObjects(t.database, place, [{ status: 'Free' }]);
    await request();
    await run(after(31_000));
    expect(await run(after(60_000))).toEqual({ ProjectsRecalculated: 0, ProjectsChanged: 0 });
    await request(new Date(T.getTime() + 40_000));
    expect(await run(after(120_000))).toEqual({ ProjectsRecalculated: 1, ProjectsChanged: 0 });
    expect((await project()).version).toBe(2);
    expect((await projectEvents())).toHaveLength(1);
  });

  it('a project whose row is locked by a writer (a transition requesting a recount) is left to the next run and recounted then', async () => {
    const [id] = await insertObjects(t.database, place, [{ status: 'Free' }, { status: 'Free' }]);
    await request();
    await t.database.db.transaction(async (tx) => {
      await tx.execute(sql`UPDATE chessboard.property_objects SET status = 'Hidden' WHERE id = ${id}`);
      await requestProjectAggregatesRecalc(tx, [place.projectId], T);
      expect(await run(after(31_000))).toEqual({ ProjectsRecalculated: 0, ProjectsChanged: 0 });
    });
    expect(await run(after(32_000))).toEqual({ ProjectsRecalculated: 1, ProjectsChanged: 1 });
    expect((await project()).property_objects_free_count).toBe(1);
  });

  it('a deleted project has its request cleared without an event', async () => {
    await request();
    await t.database.sql`UPDATE chessboard.projects SET deleted_at = now() WHERE id = ${place.projectId}`;
    expect(await run(after(31_000))).toEqual({ ProjectsRecalculated: 1, ProjectsChanged: 0 });
    expect((await project()).aggregates_recalc_requested_at).toBeNull();
    expect(await projectEvents()).toHaveLength(0);
  });

  it('the safety net release requests the recount: the free count follows', async () => {
    await insertObjects(t.database, place, [{ status: 'Reserved', timer: new Date(T.getTime() - 3600_000) }, { status: 'Free' }]);
    await run(after(0)); // nothing requested yet
    await t.database.sql`UPDATE chessboard.projects SET property_objects_free_count = 1, property_objects_total_count = 2, property_objects_held_count = 1`;
    await createPropertyObjectHoldExpirationJob({ now: () => T }).run(jobContext(t));
    expect(new Date((await project()).aggregates_recalc_requested_at)).toEqual(T);
    await run(after(31_000));
    expect(await project()).toMatchObject({ property_objects_free_count: 2, property_objects_held_count: 0 });
    expect((await projectEvents()).at(-1)!.payload.payload).toMatchObject({ propertyObjectsFreeCount: 2 });
  });

  it('is scheduled by AGGREGATES_RECALC_SCHEDULE (UTC); idle runs write no history row', () => {
    expect(projectAggregatesRecalcJob.schedule(t.env)).toEqual({ cron: t.env.AGGREGATES_RECALC_SCHEDULE, timezone: 'UTC' });
    expect(projectAggregatesRecalcJob.isIdle?.({ ProjectsRecalculated: 0 })).toBe(true);
    expect(projectAggregatesRecalcJob.isIdle?.({ ProjectsRecalculated: 2 })).toBe(false);
  });
});
