import { randomUUID } from 'node:crypto';
import cron from 'node-cron';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { ValidationError } from '../platform/errors';
import { TOPICS } from '../platform/kafka/topics';
import { registry } from '../platform/metrics';
import { runJobCycle } from '../platform/jobs/run-log';
import { createContextFor } from '../trpc/context';
import { createCallerFactory } from '../trpc/init';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { catalogRouter } from './router';
import {
  createDelistedRetentionJob, delistedRetentionJob, DelistedRetentionRunFailed, type DelistedRetentionOptions,
  type DelistedRetentionSummary,
} from './delisted-retention.job';
import { bindCatalogMetrics } from './retention-metrics';
import {
  countRows, DAY_MS, gate, insertObjectCard, insertProjectCard, jobContext, objectCard, objectUpserted, project, projectCard,
  projectUpserted, statusChanged, TENANT, waitForLockWaiter,
} from '../../test/fixtures/catalog.fixtures';

let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });
beforeEach(async () => {
  // the job scans the whole catalog: every test starts from an empty one
  await t.database.sql`TRUNCATE catalog.property_object_cards, catalog.project_cards, catalog.property_object_display_overrides,
    catalog.building_display_overrides, catalog.developer_ranking_rules`;
});

// explicit server time of the runs: cutoff = NOW − 30 d
const NOW = new Date('2025-06-01T00:30:00.000Z');
const CUTOFF = new Date(NOW.getTime() - 30 * DAY_MS);
const before = (ms: number) => new Date(CUTOFF.getTime() - ms);
const after = (ms: number) => new Date(CUTOFF.getTime() + ms);

async function run(opts: DelistedRetentionOptions = {}, over: Parameters<typeof jobContext>[1] = {}): Promise<DelistedRetentionSummary> {
  const job = createDelistedRetentionJob({ clock: () => NOW, ...opts });
  return (await job.run(jobContext(t, over))) as DelistedRetentionSummary;
}

const ids = async (table: string) => (await t.database.sql.unsafe<{ id: string }[]>(`SELECT id FROM ${table} ORDER BY id`)).map((r) => r.id);
const batchLines = (runId: string) => t.logLines().filter((l) => l.event === 'catalog.delisted_retention.batch' && l.RunId === runId);

async function seedRemovableObjects(n: number, updatedAt = before(DAY_MS)): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(updatedAt.getTime() + i) }));
  return out;
}

const caller = () => createCallerFactory(catalogRouter)(createContextFor({ database: t.database, env: t.env, logger: t.logger }, null));

async function metricValue(name: string, labels: Record<string, string> = {}, metricName = name): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  const v = (values as { value: number; labels: Record<string, unknown>; metricName?: string }[]).find((x) =>
    (x.metricName ?? name) === metricName && Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}

describe('delisted-retention: spec test table', () => {
  it('Empty batch: nothing Delisted past the cutoff → no-op success, counters 0, HasMore false', async () => {
    await insertObjectCard(t.database, { status: 'Published', updatedAt: before(365 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: after(DAY_MS) });
    await insertProjectCard(t.database, { status: 'Delisted', updatedAt: after(DAY_MS) });
    const s = await run();
    expect(s).toMatchObject({ DeletedPropertyObjectCards: 0, DeletedProjectCards: 0, DeletedOverrides: 0, BatchesProcessed: 0, HasMore: false, StoppedBy: 'Completed', Cutoff: CUTOFF.toISOString() });
    expect(await countRows(t.database, 'catalog.property_object_cards')).toBe(2);
    expect(await countRows(t.database, 'catalog.project_cards')).toBe(1);
  });

  it('Threshold: Delisted at cutoff − 1 s is deleted; cutoff + 1 s, exactly the cutoff, and any Published/Hidden stay', async () => {
    const gone = await insertObjectCard(t.database, { status: 'Delisted', updatedAt: before(1000) });
    const goneProject = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: before(1000) });
    const kept = [
      await insertObjectCard(t.database, { status: 'Delisted', updatedAt: after(1000) }),
      await insertObjectCard(t.database, { status: 'Delisted', updatedAt: CUTOFF }),
      await insertObjectCard(t.database, { status: 'Published', updatedAt: before(100 * DAY_MS) }),
      await insertObjectCard(t.database, { status: 'Hidden', saleStatus: 'Hidden', updatedAt: before(100 * DAY_MS) }),
    ];
    const keptProjects = [
      await insertProjectCard(t.database, { status: 'Delisted', updatedAt: after(1000) }),
      await insertProjectCard(t.database, { status: 'Published', updatedAt: before(100 * DAY_MS) }),
    ];
    const s = await run();
    expect(s).toMatchObject({ DeletedPropertyObjectCards: 1, DeletedProjectCards: 1, HasMore: false });
    expect(await objectCard(t.database, gone)).toBeUndefined();
    expect(await projectCard(t.database, goneProject)).toBeUndefined();
    expect(await ids('catalog.property_object_cards')).toEqual([...kept].sort());
    expect(await ids('catalog.project_cards')).toEqual([...keptProjects].sort());
  });

  it('INV-2 order objects → project: object cards go in phase A, the project in phase B, never a dangling object card', async () => {
    const projectId = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: before(DAY_MS) });
    // INV-5: the cascade gave the object cards the project card's updated_at
    for (let i = 0; i < 3; i++) await insertObjectCard(t.database, { projectId, status: 'Delisted', updatedAt: before(DAY_MS) });
    const danglingAtPhaseB: number[] = [];
    const runId = randomUUID();
    const s = await run({
      settings: { batchSize: 2 },
      onBatchLocked: async ({ phase, ids: batch }) => {
        if (phase === 'project') {
          danglingAtPhaseB.push(await countRows(t.database, 'catalog.property_object_cards', `project_id IN (${batch.map((id) => `'${id}'`).join(',')})`));
        }
      },
    }, { runId });
    expect(s).toMatchObject({ DeletedPropertyObjectCards: 3, DeletedProjectCards: 1, BatchesProcessed: 3, HasMore: false });
    expect(batchLines(runId).map((l) => [l.phase, l.batchIndex])).toEqual([['property_object', 1], ['property_object', 2], ['project', 3]]);
    expect(danglingAtPhaseB).toEqual([0]);
    expect(await countRows(t.database, 'catalog.property_object_cards')).toBe(0);
    expect(await countRows(t.database, 'catalog.project_cards')).toBe(0);
  });

  it('Orphan overrides: live and soft-deleted overrides of removed cards are deleted; ranking rules and other overrides stay', async () => {
    const projectId = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: before(DAY_MS) });
    const objectId = await insertObjectCard(t.database, { projectId, status: 'Delisted', updatedAt: before(DAY_MS) });
    const liveObject = await insertObjectCard(t.database, { status: 'Published' });
    const sql = t.database.sql;
    await sql`INSERT INTO catalog.property_object_display_overrides (id, property_object_id, title, deleted_at) VALUES
      (${randomUUID()}, ${objectId}, 'live', NULL), (${randomUUID()}, ${objectId}, 'removed earlier', now()), (${randomUUID()}, ${liveObject}, 'keep', NULL)`;
    await sql`INSERT INTO catalog.building_display_overrides (id, project_id, building_id, display_name, deleted_at) VALUES
      (${randomUUID()}, ${projectId}, ${randomUUID()}, 'live', NULL), (${randomUUID()}, ${projectId}, ${randomUUID()}, 'removed earlier', now())`;
    await sql`INSERT INTO catalog.developer_ranking_rules (id, developer_id, project_id, weight) VALUES
      (${randomUUID()}, ${TENANT}, ${projectId}, 2.5), (${randomUUID()}, ${TENANT}, NULL, 1)`;

    const s = await run();
    expect(s).toMatchObject({ DeletedPropertyObjectCards: 1, DeletedProjectCards: 1, DeletedOverrides: 4 });
    expect(await countRows(t.database, 'catalog.property_object_display_overrides')).toBe(1);
    expect(await countRows(t.database, 'catalog.property_object_display_overrides', `property_object_id = '${liveObject}'`)).toBe(1);
    expect(await countRows(t.database, 'catalog.building_display_overrides')).toBe(0);
    // DeveloperRankingRule survives delisting and removal (reactivated if the project comes back)
    expect(await countRows(t.database, 'catalog.developer_ranking_rules')).toBe(2);
  });

  it('Favorites survive: after removal the id still answers NOT_FOUND gracefully, and a later restoration answers again', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    await project(t, TOPICS.projectUpserted, projectId, projectUpserted(projectId));
    await project(t, TOPICS.propertyObjectUpserted, id, objectUpserted(id, projectId, { version: 1 }));
    expect(await caller().cardById({ id })).toMatchObject({ id, projectName: 'Riverside' });

    await project(t, TOPICS.propertyObjectDeleted, id, { propertyObjectId: id, tenantId: TENANT, projectId, deletedAt: new Date().toISOString() });
    const notFound = async () => {
      const err = await caller().cardById({ id }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(TRPCError);
      expect((err as TRPCError).code).toBe('NOT_FOUND');
      expect(((err as TRPCError).cause as { code?: string }).code).toBe('CATALOG_CARD_NOT_FOUND');
    };
    await notFound(); // Delisted: already invisible on the storefront

    const s = await run({ clock: () => new Date(Date.now() + 31 * DAY_MS) });
    expect(s.DeletedPropertyObjectCards).toBe(1);
    expect(await objectCard(t.database, id)).toBeUndefined();
    await notFound(); // removed: the favorite keeps its id and degrades gracefully

    // restoration after removal = a fresh publication under the same id: the favorite works again
    await project(t, TOPICS.propertyObjectUpserted, id, objectUpserted(id, projectId, { version: 2, updatedAt: new Date().toISOString() }));
    expect(await caller().cardById({ id })).toMatchObject({ id });
  });

  it('Partial failure on batch N: batches 1..N−1 stay committed, the run fails with its partial summary, the next run finishes', async () => {
    const all = await seedRemovableObjects(10);
    const job = createDelistedRetentionJob({
      clock: () => NOW,
      settings: { batchSize: 2 },
      onBatchLocked: ({ batchIndex }) => { if (batchIndex === 3) throw new Error('simulated DB failure'); },
    });
    const result = await runJobCycle(job, { database: t.database, env: t.env, logger: t.logger, signal: new AbortController().signal, kafka: jobContext(t).kafka }, 'manual');
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/DelistedRetentionRunFailed: .*batch 3.*simulated DB failure/);
    expect(result.summary).toMatchObject({ DeletedPropertyObjectCards: 4, BatchesProcessed: 2, HasMore: true, StoppedBy: 'Failed' });
    // oldest first: batches 1 and 2 removed the 4 oldest cards; batch 3 rolled back whole
    expect(await ids('catalog.property_object_cards')).toEqual(all.slice(4).sort());
    const failed = t.logLines().find((l) => l.event === 'catalog.delisted_retention.batch_failed' && l.RunId === result.runId);
    expect(failed).toMatchObject({ level: 'error', batchIndex: 3, phase: 'property_object' });
    // the batch's ids in the order its DELETE returned them, which is the plan's (purgeRemovableBatch): compared as a set
    expect([...(failed!.batchIds as string[])].sort()).toEqual(all.slice(4, 6).sort());
    const [row] = await t.database.sql`SELECT status, summary FROM ops.job_runs WHERE run_id = ${result.runId}`;
    expect(row).toMatchObject({ status: 'failed', summary: expect.objectContaining({ DeletedPropertyObjectCards: 4 }) });

    const next = await run({ settings: { batchSize: 2 } });
    expect(next).toMatchObject({ DeletedPropertyObjectCards: 6, HasMore: false });
    expect(await countRows(t.database, 'catalog.property_object_cards')).toBe(0);
  });

  it('Duplicate / parallel instances: the second run finds the advisory lock taken and skips; nothing is deleted twice', async () => {
    await seedRemovableObjects(5);
    const hold = gate();
    const first = run({ onBatchLocked: async ({ batchIndex }) => { if (batchIndex === 1) { hold.arrive(); await hold.wait; } } });
    await hold.reached;
    const contentionBefore = await metricValue('catalog_delisted_retention_lock_contention_total');
    const runId = randomUUID();
    const second = await run({}, { runId });
    expect(second).toMatchObject({ skippedLocked: true, DeletedPropertyObjectCards: 0, DeletedProjectCards: 0, DeletedOverrides: 0, BatchesProcessed: 0, HasMore: false });
    expect(await metricValue('catalog_delisted_retention_lock_contention_total')).toBe(contentionBefore + 1);
    expect(t.logLines().find((l) => l.RunId === runId && l.event === 'catalog.delisted_retention.skipped_locked')).toMatchObject({ level: 'warn' });
    hold.release();
    expect(await first).toMatchObject({ DeletedPropertyObjectCards: 5 });
    expect(await countRows(t.database, 'catalog.property_object_cards')).toBe(0);
    // the lock was released at the end of the first run
    expect(await run()).not.toHaveProperty('skippedLocked');
  });

  it('Duplicate / parallel instances: FOR UPDATE SKIP LOCKED leaves a row locked by another transaction alone', async () => {
    const [locked, ...others] = await seedRemovableObjects(4);
    const holder = gate();
    const tx = t.database.sql.begin(async (sql) => {
      await sql`SELECT id FROM catalog.property_object_cards WHERE id = ${locked} FOR UPDATE`;
      holder.arrive();
      await holder.wait;
    });
    await holder.reached;
    const s = await run();
    expect(s).toMatchObject({ DeletedPropertyObjectCards: 3 });
    expect(await ids('catalog.property_object_cards')).toEqual([locked]);
    for (const id of others) expect(await objectCard(t.database, id)).toBeUndefined();
    holder.release();
    await tx;
    expect(await run()).toMatchObject({ DeletedPropertyObjectCards: 1 });
  });

  it('Race with restoration: an upsert before the run takes the card off the predicate (skip)', async () => {
    const projectId = randomUUID();
    const id = randomUUID();
    const deletedAt = new Date('2025-04-01T00:00:00Z');
    await insertProjectCard(t.database, { id: projectId, status: 'Delisted', updatedAt: before(DAY_MS), sourceVersion: 1, sourceUpdatedAt: deletedAt });
    await insertObjectCard(t.database, { id, projectId, status: 'Delisted', updatedAt: before(DAY_MS), sourceVersion: 1, sourceUpdatedAt: deletedAt });
    await project(t, TOPICS.projectUpserted, projectId, projectUpserted(projectId, { version: 2, updatedAt: '2025-05-30T00:00:00.000Z' }));
    await project(t, TOPICS.propertyObjectUpserted, id, objectUpserted(id, projectId, { version: 2, updatedAt: '2025-05-30T00:00:00.000Z' }));

    const s = await run();
    expect(s).toMatchObject({ DeletedPropertyObjectCards: 0, DeletedProjectCards: 0 });
    expect((await objectCard(t.database, id))?.status).toBe('Published');
    expect((await projectCard(t.database, projectId))?.status).toBe('Published');
  });

  it.each(['property_object', 'project'] as const)(
    'Race with restoration (%s): the run locked the row first → the card is deleted, the waiting upsert recreates it fresh with the same id',
    async (kind) => {
      const id = randomUUID();
      const createdLongAgo = before(90 * DAY_MS);
      const deletedAt = new Date('2025-04-01T00:00:00Z');
      if (kind === 'property_object') {
        await insertObjectCard(t.database, { id, status: 'Delisted', updatedAt: before(DAY_MS), createdAt: createdLongAgo, sourceUpdatedAt: deletedAt });
      } else {
        await insertProjectCard(t.database, { id, status: 'Delisted', updatedAt: before(DAY_MS), createdAt: createdLongAgo, sourceUpdatedAt: deletedAt });
      }
      const hold = gate();
      const running = run({ onBatchLocked: async ({ ids: batch }) => { if (batch.includes(id)) { hold.arrive(); await hold.wait; } } });
      await hold.reached;
      const restoring = kind === 'property_object'
        ? project(t, TOPICS.propertyObjectUpserted, id, objectUpserted(id, randomUUID(), { version: 5, updatedAt: '2025-05-31T00:00:00.000Z' }))
        : project(t, TOPICS.projectUpserted, id, projectUpserted(id, { version: 5, updatedAt: '2025-05-31T00:00:00.000Z' }));
      await waitForLockWaiter(t.database); // the upsert waits on the row the run locked
      hold.release();
      const s = await running;
      expect(await restoring).toMatchObject({ result: 'applied' });
      expect(kind === 'property_object' ? s.DeletedPropertyObjectCards : s.DeletedProjectCards).toBe(1);
      const card = kind === 'property_object' ? await objectCard(t.database, id) : await projectCard(t.database, id);
      expect(card).toMatchObject({ status: 'Published', source_version: 5 });
      expect(card!.created_at.getTime()).toBeGreaterThan(createdLongAgo.getTime()); // a fresh card, not the old row
    },
  );

  it('Worker stop between batches: graceful stop after the batch in hand, committed batches kept', async () => {
    const all = await seedRemovableObjects(6);
    const stop = new AbortController();
    const s = await run({
      settings: { batchSize: 2 },
      onBatchLocked: ({ batchIndex }) => { if (batchIndex === 1) stop.abort(); }, // the stop arrives during batch 1
    }, { signal: stop.signal });
    expect(s).toMatchObject({ BatchesProcessed: 1, DeletedPropertyObjectCards: 2, StoppedBy: 'StopRequested', HasMore: true });
    expect(await ids('catalog.property_object_cards')).toEqual(all.slice(2).sort());
  });
});

describe('delisted-retention: limits, schedule, config, metrics', () => {
  it('MaxBatchesPerRun = 2 with 5 batches of work → HasMore = true; the next run finishes', async () => {
    await seedRemovableObjects(10);
    await insertProjectCard(t.database, { status: 'Delisted', updatedAt: before(DAY_MS) });
    const first = await run({ settings: { batchSize: 2, maxBatchesPerRun: 2 } });
    expect(first).toMatchObject({ BatchesProcessed: 2, DeletedPropertyObjectCards: 4, DeletedProjectCards: 0, HasMore: true, StoppedBy: 'MaxBatchesPerRun' });
    const next = await run({ settings: { batchSize: 2 } });
    expect(next).toMatchObject({ BatchesProcessed: 4, DeletedPropertyObjectCards: 6, DeletedProjectCards: 1, HasMore: false, StoppedBy: 'Completed' });
  });

  it('a limit reached exactly when the work is done → HasMore = false', async () => {
    await seedRemovableObjects(4);
    expect(await run({ settings: { batchSize: 2, maxBatchesPerRun: 2 } })).toMatchObject({ BatchesProcessed: 2, StoppedBy: 'MaxBatchesPerRun', HasMore: false });
  });

  it('MaxRunDuration stops the run before the next batch → HasMore = true', async () => {
    await seedRemovableObjects(6);
    let now = NOW;
    const s = await run({
      clock: () => now,
      settings: { batchSize: 2 },
      onBatchLocked: ({ batchIndex }) => { if (batchIndex === 1) now = new Date(NOW.getTime() + 21 * 60_000); },
    });
    expect(s).toMatchObject({ BatchesProcessed: 1, StoppedBy: 'MaxRunDuration', HasMore: true, Cutoff: CUTOFF.toISOString() });
  });

  it('INV-2: a project card waits while an object card of the project remains (no dangling object card)', async () => {
    const projectId = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: before(2 * DAY_MS) });
    const young = await insertObjectCard(t.database, { projectId, status: 'Delisted', updatedAt: after(DAY_MS) });
    expect(await run()).toMatchObject({ DeletedProjectCards: 0, HasMore: false });
    expect(await projectCard(t.database, projectId)).toBeDefined();
    expect(await objectCard(t.database, young)).toBeDefined();
  });

  it('INV-7: events after delisting do not move the retention clock — the card goes RetentionPeriod after delisting', async () => {
    const id = randomUUID();
    const projectId = randomUUID();
    await project(t, TOPICS.propertyObjectUpserted, id, objectUpserted(id, projectId));
    await project(t, TOPICS.propertyObjectDeleted, id, { propertyObjectId: id, tenantId: TENANT, projectId, deletedAt: new Date().toISOString() });
    const delistedAt = (await objectCard(t.database, id))!.updated_at;
    await new Promise((r) => setTimeout(r, 20));
    await project(t, TOPICS.propertyObjectStatusChanged, id, statusChanged(id, projectId, { version: 7, statusChangedAt: new Date().toISOString() }));
    await project(t, TOPICS.propertyObjectDeleted, id, { propertyObjectId: id, tenantId: TENANT, projectId, deletedAt: new Date().toISOString() });
    expect((await objectCard(t.database, id))!.updated_at).toEqual(delistedAt);
    const period = 30 * DAY_MS;
    expect(await run({ clock: () => new Date(delistedAt.getTime() + period) })).toMatchObject({ DeletedPropertyObjectCards: 0 });
    expect(await run({ clock: () => new Date(delistedAt.getTime() + period + 1) })).toMatchObject({ DeletedPropertyObjectCards: 1 });
  });

  it('without an injected clock the cutoff is PostgreSQL now() − RetentionPeriod', async () => {
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 31 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 29 * DAY_MS) });
    const [{ now }] = await t.database.sql<{ now: string }[]>`SELECT now()::text AS now`;
    const s = await delistedRetentionJob.run(jobContext(t)) as DelistedRetentionSummary;
    expect(s.DeletedPropertyObjectCards).toBe(1);
    expect(Math.abs(new Date(s.Cutoff!).getTime() - (new Date(now).getTime() - 30 * DAY_MS))).toBeLessThan(60_000);
  });

  it('the schedule is 0 30 3 * * * in Europe/Moscow: the next fire time is 00:30 UTC', async () => {
    const schedule = delistedRetentionJob.schedule(t.env);
    expect(schedule).toEqual({ cron: '0 30 3 * * *', timezone: 'Europe/Moscow' });
    const task = cron.createTask(schedule.cron, () => {}, { timezone: schedule.timezone });
    try {
      await task.start(); // node-cron answers getNextRun only for a started task; destroyed below before any tick
      const next = task.getNextRun()!;
      expect([next.getUTCHours(), next.getUTCMinutes(), next.getUTCSeconds()]).toEqual([0, 30, 0]);
      expect(next.getTime() - Date.now()).toBeLessThanOrEqual(DAY_MS);
      // once a day (Moscow has no DST)
      const [a, b] = task.getNextRuns(2);
      expect(b.getTime() - a.getTime()).toBe(DAY_MS);
    } finally {
      await task.destroy();
    }
  });

  it.each([
    ['BatchSize', { batchSize: 0 }],
    ['BatchSize', { batchSize: 10_001 }],
    ['RetentionPeriod', { retentionPeriodMs: 0 }],
    ['MaxBatchesPerRun', { maxBatchesPerRun: 0 }],
    ['MaxRunDuration', { maxRunDurationMs: -5 }],
  ] as const)('invalid config (%s) → ValidationError naming the field, nothing deleted', async (field, settings) => {
    await seedRemovableObjects(2);
    const err = await run({ settings }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).details).toEqual({ field });
    expect(await countRows(t.database, 'catalog.property_object_cards')).toBe(2);
  });

  it('metrics after a run show the counters, the batches, the duration and the backlog', async () => {
    const projectId = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: before(DAY_MS) });
    await insertObjectCard(t.database, { projectId, status: 'Delisted', updatedAt: before(DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: before(DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: after(DAY_MS) }); // backlog, not yet past cutoff
    await t.database.sql`INSERT INTO catalog.building_display_overrides (id, project_id, building_id) VALUES (${randomUUID()}, ${projectId}, ${randomUUID()})`;
    const names = [
      'catalog_delisted_deleted_property_object_cards_total', 'catalog_delisted_deleted_project_cards_total',
      'catalog_delisted_deleted_overrides_total', 'catalog_delisted_retention_batches_processed',
    ];
    const beforeValues = await Promise.all(names.map((n) => metricValue(n)));
    const durationCount = () => metricValue('catalog_delisted_retention_run_duration_seconds', {}, 'catalog_delisted_retention_run_duration_seconds_count');
    const countBefore = await durationCount();

    const s = await run();
    expect(s).toMatchObject({ DeletedPropertyObjectCards: 2, DeletedProjectCards: 1, DeletedOverrides: 1, BatchesProcessed: 2 });
    const afterValues = await Promise.all(names.map((n) => metricValue(n)));
    expect(afterValues.map((v, i) => v - beforeValues[i])).toEqual([2, 1, 1, 2]);
    expect(await durationCount()).toBe(countBefore + 1);
    // set after the run: one Delisted object card left, not past the cutoff
    expect(await metricValue('catalog_delisted_backlog', { kind: 'property_object', scope: 'all' })).toBe(1);
    expect(await metricValue('catalog_delisted_backlog', { kind: 'property_object', scope: 'past_cutoff' })).toBe(0);
    expect(await metricValue('catalog_delisted_backlog', { kind: 'project', scope: 'all' })).toBe(0);
    const text = await registry.getSingleMetricAsString('catalog_delisted_backlog');
    expect(text).toContain('catalog_delisted_backlog{kind="property_object",scope="all"} 1');
  });

  it('catalog_delisted_backlog is computed at scrape time once bound to a database', async () => {
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 40 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - DAY_MS) });
    await insertProjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 40 * DAY_MS) });
    bindCatalogMetrics(t.database, 30 * DAY_MS);
    try {
      expect(await metricValue('catalog_delisted_backlog', { kind: 'property_object', scope: 'all' })).toBe(2);
      expect(await metricValue('catalog_delisted_backlog', { kind: 'property_object', scope: 'past_cutoff' })).toBe(1);
      expect(await metricValue('catalog_delisted_backlog', { kind: 'project', scope: 'past_cutoff' })).toBe(1);
    } finally {
      bindCatalogMetrics(undefined);
    }
  });

  it('logs started (RunId, cutoff, BatchSize), a debug line per batch and completed (counters, HasMore, duration)', async () => {
    await seedRemovableObjects(3);
    const runId = randomUUID();
    await run({ settings: { batchSize: 2 } }, { runId });
    const lines = t.logLines().filter((l) => l.RunId === runId);
    expect(lines.find((l) => l.event === 'catalog.delisted_retention.started')).toMatchObject({ level: 'info', cutoff: CUTOFF.toISOString(), BatchSize: 2 });
    expect(batchLines(runId)).toEqual([
      expect.objectContaining({ level: 'debug', phase: 'property_object', batchIndex: 1, deletedCards: 2, DeletedPropertyObjectCards: 2 }),
      expect.objectContaining({ level: 'debug', phase: 'property_object', batchIndex: 2, deletedCards: 1, DeletedPropertyObjectCards: 3 }),
    ]);
    expect(lines.find((l) => l.event === 'catalog.delisted_retention.completed')).toMatchObject({
      level: 'info', DeletedPropertyObjectCards: 3, BatchesProcessed: 2, HasMore: false, DurationMs: expect.any(Number),
    });
  });

  it('publishes no event and touches nothing outside the catalog schema', async () => {
    await seedRemovableObjects(2);
    const outboxBefore = await countRows(t.database, 'chessboard.outbox') + await countRows(t.database, 'crm.outbox');
    await run();
    expect(await countRows(t.database, 'chessboard.outbox') + await countRows(t.database, 'crm.outbox')).toBe(outboxBefore);
  });
});

describe('DelistedRetentionRunFailed', () => {
  it('carries the partial summary as err.summary when job.run is called directly', async () => {
    await seedRemovableObjects(3);
    const err = await run({ settings: { batchSize: 1 }, onBatchLocked: ({ batchIndex }) => { if (batchIndex === 2) throw new Error('boom'); } })
      .then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(DelistedRetentionRunFailed);
    expect((err as DelistedRetentionRunFailed).summary).toMatchObject({ DeletedPropertyObjectCards: 1, BatchesProcessed: 1 });
    // the failed run released the lock
    expect(await run()).toMatchObject({ DeletedPropertyObjectCards: 2 });
  });
});
