import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DAY_MS, insertObjectCard, insertProjectCard } from '../../../test/fixtures/catalog.fixtures';
import { createKafka } from '../../platform/kafka/client';
import { JobScheduler } from '../../platform/jobs/scheduler';
import { JOB_NAMES } from '../../main/jobs';
import type { JobDefinition } from '../../platform/jobs/types';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { nextFireTime } from './jobs';
import { closeOpsKafka } from './kafka-admin';
import { actorOf, auditRows, DAY, errorOf, HOUR, insertJobRun, insertObject, insertWorld, MIN, opsCaller } from '../../../test/fixtures/ops-dashboard.fixtures';

let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await closeOpsKafka(); await t?.close(); });
beforeEach(async () => {
  await t.database.sql`TRUNCATE chessboard.property_objects, chessboard.hold_releases, chessboard.outbox, ops.job_runs, ops.audit_log,
    ops.job_controls, catalog.property_object_cards, catalog.project_cards CASCADE`;
});

describe('job schedules', () => {
  it('lists every job with its cron, time zone (from the job definition) and next fire time', async () => {
    const jobs = await opsCaller(t, actorOf('viewer')).jobs();
    expect(jobs.map((j) => j.name)).toEqual([...JOB_NAMES]);
    const retention = jobs.find((j) => j.name === 'delisted-retention')!;
    expect(retention).toMatchObject({ cron: '0 30 3 * * *', timezone: 'Europe/Moscow', paused: false, lastRun: null });
    // 03:30 in Moscow (UTC+3) is 00:30 UTC, within the next day
    expect(retention.nextRunAt!.toISOString()).toMatch(/T00:30:00\.000Z$/);
    expect(retention.nextRunAt!.getTime() - Date.now()).toBeLessThanOrEqual(DAY);
    expect(jobs.find((j) => j.name === 'reconciliation')).toMatchObject({ cron: '0 */5 * * * *', timezone: 'UTC' });
    expect(jobs.find((j) => j.name === 'property-object-hold-expiration')).toMatchObject({ cron: t.env.HOLD_EXPIRATION_SCHEDULE, timezone: 'UTC' });
  });

  it('nextFireTime honours the time zone and rejects an invalid expression', () => {
    const next = nextFireTime('0 0 12 * * *', 'Asia/Tokyo')!;
    expect(next.getUTCHours()).toBe(3);
    expect(nextFireTime('not a cron', 'UTC')).toBeNull();
  });
});

describe('pause / resume', () => {
  it('persists the pause in ops.job_controls with who and why; the scheduler skips a paused job\'s tick; resume runs it again', async () => {
    const ops = actorOf('ops');
    const run = vi.fn(async () => ({ Items: 1 }));
    const fake: JobDefinition = { name: 'project-aggregates-recalc', schedule: () => ({ cron: '0 0 0 1 1 *', timezone: 'UTC' }), run };
    const scheduler = new JobScheduler({ database: t.database, env: t.env, logger: t.logger, kafka: createKafka(t.env) });
    const entry = scheduler.register(fake);
    try {
      await opsCaller(t, ops).pauseJob({ job: 'project-aggregates-recalc', reason: 'investigating a slow recalc' });
      const [control] = await t.database.sql`SELECT paused, changed_by, reason FROM ops.job_controls WHERE job = 'project-aggregates-recalc'`;
      expect(control).toEqual({ paused: true, changed_by: ops.userId, reason: 'investigating a slow recalc' });
      expect((await opsCaller(t, ops).jobs()).find((j) => j.name === 'project-aggregates-recalc')).toMatchObject({ paused: true, control: { reason: 'investigating a slow recalc' } });

      await entry.task.execute(); // what a cron tick does
      expect(run).not.toHaveBeenCalled();
      expect((await t.database.sql`SELECT 1 FROM ops.job_runs`).length).toBe(0);

      await opsCaller(t, ops).resumeJob({ job: 'project-aggregates-recalc' });
      await entry.task.execute();
      expect(run).toHaveBeenCalledTimes(1);
      const [runRow] = await t.database.sql`SELECT status, trigger FROM ops.job_runs WHERE job = 'project-aggregates-recalc'`;
      expect(runRow).toEqual({ status: 'succeeded', trigger: 'schedule' });
    } finally {
      await scheduler.stop();
    }
    const audit = [...(await auditRows(t.database, 'ops.job.pause')), ...(await auditRows(t.database, 'ops.job.resume'))];
    expect(audit).toEqual([
      expect.objectContaining({ actor_id: ops.userId, target_type: 'Job', target_id: 'project-aggregates-recalc', reason: 'investigating a slow recalc' }),
      expect.objectContaining({ actor_id: ops.userId, action: 'ops.job.resume', reason: null }),
    ]);
  });

  it('a pause needs a reason', async () => {
    expect((await errorOf(opsCaller(t, actorOf('ops')).pauseJob({ job: 'booking-expiration', reason: ' ' }))).code).toBe('BAD_REQUEST');
  });
});

describe('run now', () => {
  it('property-object-hold-expiration: one manual cycle releases the holds past grace; recorded in job_runs and the audit log; the lost-release list shows them', async () => {
    const w = await insertWorld(t.database, 'A');
    const now = Date.now();
    const past = [
      await insertObject(t.database, w, { status: 'Reserved', timer: new Date(now - 35 * MIN) }),
      await insertObject(t.database, w, { status: 'Booked', timer: new Date(now - 2 * HOUR) }),
    ];
    const inGrace = await insertObject(t.database, w, { status: 'Reserved', timer: new Date(now - 3 * MIN) });
    const ops = actorOf('ops');
    const c = opsCaller(t, ops);
    expect((await c.overview()).stuckHolds).toMatchObject({ pastGrace: 2, inGrace: 1 });

    const result = await c.runJobNow({ job: 'property-object-hold-expiration', reason: 'stuck holds after a consumer outage' });
    expect(result.status).toBe('succeeded');
    expect(result.summary).toMatchObject({ ReservedReleasedCount: 1, BookedReleasedCount: 1 });

    expect((await c.overview()).stuckHolds).toMatchObject({ pastGrace: 0, inGrace: 1 });
    const lost = await c.holdReleases();
    expect(lost.rows.map((r) => r.propertyObjectId).sort()).toEqual(past.map((p) => p.id).sort());
    expect(lost.rows.every((r) => r.runId === result.runId)).toBe(true);
    expect((await c.stuckHolds()).rows.map((r) => r.propertyObjectId)).toEqual([inGrace.id]);

    const [run] = await c.jobRuns({ job: 'property-object-hold-expiration' });
    expect(run).toMatchObject({ runId: result.runId, trigger: 'manual', status: 'succeeded', items: 2 });
    expect(await auditRows(t.database, 'ops.job.run-now')).toEqual([expect.objectContaining({
      actor_id: ops.userId, target_id: 'property-object-hold-expiration', reason: 'stuck holds after a consumer outage',
      details: expect.objectContaining({ runId: result.runId, status: 'succeeded' }),
    })]);
  });

  it('delisted-retention: a manual run empties the Delisted backlog past the cutoff and appears in the history with its counters', async () => {
    const old = new Date(Date.now() - 45 * DAY_MS);
    const project = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: old });
    for (let i = 0; i < 3; i++) await insertObjectCard(t.database, { projectId: project, status: 'Delisted', updatedAt: old });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 2 * DAY_MS) });
    const c = opsCaller(t, actorOf('ops'));
    const before = await c.catalog();
    expect(before.backlog.propertyObjects).toMatchObject({ all: 4, pastCutoff: 3 });
    expect(before.candidates.propertyObjects.count).toBe(3);
    expect(before.candidates.projects.count).toBe(1);

    const result = await c.runJobNow({ job: 'delisted-retention' });
    expect(result.status).toBe('succeeded');
    const after = await c.catalog();
    expect(after.backlog.propertyObjects).toMatchObject({ all: 1, pastCutoff: 0 });
    expect(after.backlog.projects).toMatchObject({ all: 0, pastCutoff: 0 });
    expect(after.candidates.propertyObjects.count).toBe(0);
    expect(after.runs[0]).toMatchObject({
      runId: result.runId, status: 'succeeded', trigger: 'manual', deletedPropertyObjectCards: 3, deletedProjectCards: 1, batchesProcessed: 2, hasMore: false,
    });
    // the retention tile no longer alerts: a run succeeded within 26 h
    expect((await c.overview()).alerts.map((a) => a.code)).not.toContain('RETENTION_NOT_RUN');
  });

  it('refuses a second manual run of the same job while one is in progress in this process', async () => {
    const c = opsCaller(t, actorOf('ops'));
    const [a, b] = await Promise.allSettled([c.runJobNow({ job: 'project-aggregates-recalc' }), c.runJobNow({ job: 'project-aggregates-recalc' })]);
    expect(a.status).toBe('fulfilled');
    expect(b.status).toBe('rejected');
    expect(((b as PromiseRejectedResult).reason as { code: string }).code).toBe('CONFLICT');
  });
});

describe('run history', () => {
  it('filters by status and date range, newest first, with duration and item counts for the chart', async () => {
    const base = new Date('2026-05-01T00:00:00Z').getTime();
    await insertJobRun(t.database, { job: 'outbox-relay', startedAt: new Date(base), durationMs: 120, summary: { Published: 7 } });
    await insertJobRun(t.database, { job: 'outbox-relay', startedAt: new Date(base + HOUR), status: 'failed', error: 'Error: broker down', summary: { Published: 0, Failed: 3 } });
    await insertJobRun(t.database, { job: 'outbox-relay', startedAt: new Date(base + 2 * HOUR), durationMs: 80, summary: { Published: 2 } });
    await insertJobRun(t.database, { job: 'booking-expiration', startedAt: new Date(base + HOUR), summary: { ReserveExpiredCount: 1 } });
    const c = opsCaller(t, actorOf('viewer'));
    const all = await c.jobRuns({ job: 'outbox-relay' });
    expect(all.map((r) => [r.status, r.items, r.durationMs])).toEqual([['succeeded', 2, 80], ['failed', 0, 100], ['succeeded', 7, 120]]);
    expect((await c.jobRuns({ job: 'outbox-relay', statuses: ['failed'] })).map((r) => r.error)).toEqual(['Error: broker down']);
    const ranged = await c.jobRuns({ job: 'outbox-relay', from: new Date(base + 30 * MIN), to: new Date(base + 90 * MIN) });
    expect(ranged.map((r) => r.status)).toEqual(['failed']);
    expect(await c.jobRuns({ job: 'outbox-relay', beforeId: all[1]!.id })).toHaveLength(1);
  });
});
