import path from 'node:path';
import type postgres from 'postgres';
import { Agent } from '../lib/agent-client';
import type { BenchCase } from '../lib/context';
import { rawClient, settle } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { median } from '../lib/stats';

/**
 * delisted-retention over 200,000 Delisted object cards past the cutoff (100 per project) + their
 * 2,000 Delisted project cards + 100,000 display overrides (96,000 of object cards, 4,000 of
 * buildings), among 1,000,000 Published object cards of 1,000 Published projects. The job runs
 * unchanged (BatchSize 2000, MaxRunDuration 20 min) except MaxBatchesPerRun, raised so that one run
 * removes the whole backlog (the default 100 would stop after the 200,000 object cards). The
 * baseline: the same batches as raw DELETE statements (one statement per batch, its own
 * transaction), on the same rows, restored from saved copies before every run.
 */

const TABLES = [
  'catalog.property_object_cards', 'catalog.project_cards', 'catalog.property_object_display_overrides',
  'catalog.building_display_overrides', 'ops.job_runs',
];
const BATCH = 2000;
const MAX_RUN_DURATION_MS = 20 * 60_000;

async function createDataset(sql: postgres.Sql, published: number, delisted: number): Promise<{ projects: number; overrides: number }> {
  const delistedProjects = Math.ceil(delisted / 100);
  const publishedProjects = Math.ceil(published / 1000);
  const total = published + delisted;
  const every = Math.round(total / delisted); // every 6th card is Delisted: scattered over the heap like real deletions
  const poOverrides = Math.round(delisted * 0.48);
  const buildingOverrides = delistedProjects * 2;
  await sql.unsafe(`
    INSERT INTO catalog.project_cards (id, developer_id, name, city, status, free_count, source_version, created_at, updated_at)
    SELECT bench.uuid('bench:pub-project:' || p), bench.uuid('bench:developer:' || (p % 20)), 'Project ' || p, 'Bench', 'Published', 100, 3,
           now() - interval '400 days', now() - (p % 60) * interval '1 day'
    FROM generate_series(0, ${publishedProjects - 1}) p
    UNION ALL
    SELECT bench.uuid('bench:del-project:' || p), bench.uuid('bench:developer:' || (p % 20)), 'Gone ' || p, 'Bench', 'Delisted', 0, 4,
           now() - interval '400 days', now() - interval '45 days' - p * interval '1 second'
    FROM generate_series(0, ${delistedProjects - 1}) p`);
  await sql.unsafe(`
    INSERT INTO catalog.property_object_cards (id, project_id, building_id, developer_id, number, floor, rooms, area, price, sale_status,
      status, source_version, created_at, updated_at)
    SELECT bench.uuid('bench:card:' || i),
           CASE WHEN del THEN bench.uuid('bench:del-project:' || ((i / ${every} - 1) / 100)) ELSE bench.uuid('bench:pub-project:' || (i % ${publishedProjects})) END,
           bench.uuid('bench:building:' || (i % 5000)), bench.uuid('bench:developer:' || (i % 20)), (i % 1000)::text, 1 + i % 25, i % 4,
           30 + i % 70, 5000000 + (i % 1000) * 1000, 'Free',
           CASE WHEN del THEN 'Delisted' ELSE 'Published' END, 2, now() - interval '400 days',
           CASE WHEN del THEN now() - interval '45 days' + (i % 86400) * interval '1 second' ELSE now() - (i % 25) * interval '1 day' END
    FROM (SELECT i, i % ${every} = 0 AND i / ${every} <= ${delisted} AS del FROM generate_series(1, ${total}) i) s`);
  await sql.unsafe(`
    INSERT INTO catalog.property_object_display_overrides (id, property_object_id, title, badge, deleted_at)
    SELECT bench.uuid('bench:po-override:' || d), bench.uuid('bench:card:' || (d * ${every})), 'Title ' || d, 'sale',
           CASE WHEN d % 10 = 0 THEN now() - interval '50 days' END
    FROM generate_series(1, ${poOverrides}) d`);
  await sql.unsafe(`
    INSERT INTO catalog.building_display_overrides (id, project_id, building_id, display_name)
    SELECT bench.uuid('bench:b-override:' || o), bench.uuid('bench:del-project:' || (o / 2)), bench.uuid('bench:building:' || o), 'Building ' || o
    FROM generate_series(0, ${buildingOverrides - 1}) o`);
  await sql.unsafe(`CREATE TABLE bench.saved_po_cards AS SELECT * FROM catalog.property_object_cards WHERE status = 'Delisted'`);
  await sql.unsafe(`CREATE TABLE bench.saved_project_cards AS SELECT * FROM catalog.project_cards WHERE status = 'Delisted'`);
  await sql.unsafe(`CREATE TABLE bench.saved_po_overrides AS SELECT * FROM catalog.property_object_display_overrides`);
  await sql.unsafe(`CREATE TABLE bench.saved_building_overrides AS SELECT * FROM catalog.building_display_overrides`);
  await settle(sql, TABLES);
  return { projects: delistedProjects, overrides: poOverrides + buildingOverrides };
}

async function restore(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`INSERT INTO catalog.project_cards SELECT * FROM bench.saved_project_cards ON CONFLICT DO NOTHING`);
  await sql.unsafe(`INSERT INTO catalog.property_object_cards SELECT * FROM bench.saved_po_cards ON CONFLICT DO NOTHING`);
  await sql.unsafe(`INSERT INTO catalog.property_object_display_overrides SELECT * FROM bench.saved_po_overrides ON CONFLICT DO NOTHING`);
  await sql.unsafe(`INSERT INTO catalog.building_display_overrides SELECT * FROM bench.saved_building_overrides ON CONFLICT DO NOTHING`);
  await sql.unsafe(`TRUNCATE ops.job_runs`);
  await settle(sql, TABLES);
}

/** The job's batches as single statements: lock the batch (same predicate, order, limit, SKIP LOCKED), delete its overrides, delete it. */
const RAW_PHASE_A = `
  WITH batch AS (
    SELECT id FROM catalog.property_object_cards
    WHERE status = 'Delisted' AND updated_at < $1::timestamptz
    ORDER BY updated_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
  ), overrides AS (
    DELETE FROM catalog.property_object_display_overrides WHERE property_object_id IN (SELECT id FROM batch) RETURNING 1
  ), cards AS (
    DELETE FROM catalog.property_object_cards WHERE id IN (SELECT id FROM batch) RETURNING 1
  )
  SELECT (SELECT count(*) FROM cards)::int AS n, (SELECT count(*) FROM overrides)::int AS overrides`;
const RAW_PHASE_B = `
  WITH batch AS (
    SELECT id FROM catalog.project_cards p
    WHERE status = 'Delisted' AND updated_at < $1::timestamptz
      AND NOT EXISTS (SELECT 1 FROM catalog.property_object_cards c WHERE c.project_id = p.id)
    ORDER BY updated_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
  ), overrides AS (
    DELETE FROM catalog.building_display_overrides WHERE project_id IN (SELECT id FROM batch) RETURNING 1
  ), cards AS (
    DELETE FROM catalog.project_cards WHERE id IN (SELECT id FROM batch) RETURNING 1
  )
  SELECT (SELECT count(*) FROM cards)::int AS n, (SELECT count(*) FROM overrides)::int AS overrides`;

export const delistedRetentionCase: BenchCase = {
  name: 'delisted-retention',
  title: 'delisted-retention run',
  async run(ctx) {
    const published = ctx.scale(1_000_000);
    const delisted = ctx.scale(200_000);
    const url = await ctx.databases.create('retention');
    const sql = rawClient(url);
    const runs = Math.min(ctx.runs, 3); // a run plus its restore takes most of a minute at full size
    try {
      ctx.log(`delisted-retention: generating ${published.toLocaleString('en-US')} Published + ${delisted.toLocaleString('en-US')} Delisted cards`);
      const t0 = performance.now();
      const { projects, overrides } = await createDataset(sql, published, delisted);
      const expected = delisted + projects + overrides;
      ctx.log(`delisted-retention: dataset ready in ${((performance.now() - t0) / 1000).toFixed(1)} s (${expected.toLocaleString('en-US')} rows to remove)`);

      const agent = await Agent.start('retention', ctx.workerEnv(url, '', { DELISTED_RETENTION_MAX_BATCHES_PER_RUN: '1000' }),
        path.join(ctx.logDir, 'agent-retention.log'));
      const jobMs: number[] = [];
      const jobRates: number[] = [];
      const rawMs: number[] = [];
      const rawRates: number[] = [];
      const batchMs: number[] = [];
      let lastSummary: Record<string, unknown> = {};
      try {
        const runJob = async () => {
          const r = await agent.job('delisted-retention');
          if (r.status !== 'succeeded') throw new Error(`delisted-retention ${r.status}: ${r.error}`);
          const s = r.summary;
          const removed = Number(s.DeletedPropertyObjectCards) + Number(s.DeletedProjectCards) + Number(s.DeletedOverrides);
          if (removed !== expected || s.HasMore !== false || s.StoppedBy !== 'Completed') {
            throw new Error(`retention run removed ${removed} of ${expected} (HasMore ${s.HasMore}, StoppedBy ${s.StoppedBy})`);
          }
          lastSummary = s;
          return { ms: r.ms, removed, txMs: r.txMs };
        };
        const runRaw = async () => {
          const [{ cutoff }] = await sql<{ cutoff: string }[]>`SELECT (now() - interval '30 days')::text AS cutoff`;
          const a = await agent.sql(RAW_PHASE_A, [cutoff, BATCH], true);
          const b = await agent.sql(RAW_PHASE_B, [cutoff, BATCH], true);
          const removed = [...a.rows, ...b.rows].reduce((acc, row) => acc + Number(row.n) + Number(row.overrides), 0);
          if (removed !== expected) throw new Error(`raw deletes removed ${removed} of ${expected}`);
          return { ms: a.ms + b.ms, removed };
        };
        await restore(sql); await runJob();
        await restore(sql); await runRaw();
        for (let i = 0; i < runs; i++) {
          await restore(sql);
          const j = await runJob();
          jobMs.push(j.ms);
          jobRates.push(j.removed / (j.ms / 1000));
          batchMs.push(...j.txMs);
          await restore(sql);
          const r = await runRaw();
          rawMs.push(r.ms);
          rawRates.push(r.removed / (r.ms / 1000));
          ctx.log(`delisted-retention: run ${i + 1}/${runs}: job ${(j.ms / 1000).toFixed(1)} s (${Math.round(jobRates.at(-1)!)} rows/s), raw ${(r.ms / 1000).toFixed(1)} s (${Math.round(rawRates.at(-1)!)} rows/s)`);
        }
        const mem = agent.memory();
        ctx.memory.set('delisted-retention', { vmHWMKiB: mem.vmHWMKiB, maxSampledRssKiB: agent.maxSampledRssKiB, what: 'job-runner child, delisted-retention' });
      } finally {
        await agent.stop();
      }
      const c = 'delisted-retention';
      const rateRatio = median(jobRates) / median(rawRates);
      const budgetMs = MAX_RUN_DURATION_MS / 20;
      const metrics: Metric[] = [
        sampled({ case: c, metric: 'delete rate (job)', unit: 'rows/s', ratio: rateRatio, ratioLabel: 'of raw SQL', budget: '≥ 0.7× raw SQL',
          pass: rateRatio >= 0.7, note: `rows = object cards + project cards + overrides (${expected.toLocaleString('en-US')} per run); last summary ${JSON.stringify(lastSummary)}` }, jobRates),
        sampled({ case: c, metric: 'delete rate (raw SQL batched DELETEs)', unit: 'rows/s' }, rawRates),
        sampled({ case: c, metric: 'whole run', unit: 'ms', budget: `≤ ${budgetMs / 1000} s (MaxRunDuration/20)`, pass: median(jobMs) <= budgetMs }, jobMs),
        sampled({ case: c, metric: `batch of ${BATCH} (job transaction)`, unit: 'ms' }, batchMs),
      ];
      return metrics;
    } finally {
      await sql.end({ timeout: 5 });
    }
  },
};
