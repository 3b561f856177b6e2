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
 * transaction), on the same rows, restored from saved copies into the same places before every run.
 * The ratio is the median of per-run pair ratios (job and raw of one run adjacent in time).
 */

/** the catalog tables a run deletes from (both sides) */
const DELETED_FROM = [
  'catalog.property_object_cards', 'catalog.project_cards', 'catalog.property_object_display_overrides',
  'catalog.building_display_overrides',
];
const TABLES = [...DELETED_FROM, 'ops.job_runs'];
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
  // No autovacuum on the tables the case deletes from (this database only): the restore vacuums them
  // itself before every run, and an autovacuum of the ~300,000 dead rows a run leaves, landing inside a
  // measured window or between a run and its restore, would change the layout one side deletes from
  // (see restore) and widen the run-to-run spread.
  for (const table of DELETED_FROM) await sql.unsafe(`ALTER TABLE ${table} SET (autovacuum_enabled = off)`);
  await settle(sql, TABLES);
  return { projects: delistedProjects, overrides: poOverrides + buildingOverrides };
}

/**
 * Puts the removed rows back and settles. The VACUUM first matters: it frees the dead rows of the last
 * run, so the restore refills those same holes every time and every run starts from rows scattered like
 * the original data, as real deletions are. Without it the INSERT would find no free space (the dead rows
 * still hold it) and append the rows at the end of the tables, and the next restore would fill the old
 * places: the layout would alternate between "packed at the end" and "scattered" restore by restore, and
 * the job and the raw statements would delete from different layouts (docs/decisions/0017).
 */
async function restore(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`VACUUM ${DELETED_FROM.join(', ')}`);
  await sql.unsafe(`INSERT INTO catalog.project_cards SELECT * FROM bench.saved_project_cards ON CONFLICT DO NOTHING`);
  await sql.unsafe(`INSERT INTO catalog.property_object_cards SELECT * FROM bench.saved_po_cards ON CONFLICT DO NOTHING`);
  await sql.unsafe(`INSERT INTO catalog.property_object_display_overrides SELECT * FROM bench.saved_po_overrides ON CONFLICT DO NOTHING`);
  await sql.unsafe(`INSERT INTO catalog.building_display_overrides SELECT * FROM bench.saved_building_overrides ON CONFLICT DO NOTHING`);
  await sql.unsafe(`TRUNCATE ops.job_runs`);
  await settle(sql, TABLES);
}

/** The job's batches as single statements: lock the batch (same predicate, order, limit, SKIP LOCKED), delete its overrides (found the same way), delete it. */
const RAW_PHASE_A = `
  WITH batch AS (
    SELECT id FROM catalog.property_object_cards
    WHERE status = 'Delisted' AND updated_at < $1::timestamptz
    ORDER BY updated_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
  ), overrides AS (
    DELETE FROM catalog.property_object_display_overrides WHERE property_object_id = ANY (ARRAY(SELECT id FROM batch)) RETURNING 1
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
    DELETE FROM catalog.building_display_overrides WHERE project_id = ANY (ARRAY(SELECT id FROM batch)) RETURNING 1
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
      const rawBatchMs: number[] = [];
      const pairRatios: number[] = [];
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
          // the last statement of each phase finds nothing and ends it, as the job's empty batch does
          return { ms: a.ms + b.ms, removed, batchMs: [...a.execMs.slice(0, -1), ...b.execMs.slice(0, -1)] };
        };
        await restore(sql); await runJob();
        await restore(sql); await runRaw();
        // Run i is a pair — the job and the raw statements, adjacent in time — and its ratio is job/raw of
        // that pair: a slower or faster stretch of the machine moves both sides of a pair alike. The side
        // that goes first alternates, so neither is always the one right after the warm-up or the other.
        for (let i = 0; i < runs; i++) {
          const jobFirst = i % 2 === 0;
          let j: Awaited<ReturnType<typeof runJob>> | undefined;
          let r: Awaited<ReturnType<typeof runRaw>> | undefined;
          for (const side of jobFirst ? ['job', 'raw'] : ['raw', 'job']) {
            await restore(sql);
            if (side === 'job') j = await runJob();
            else r = await runRaw();
          }
          jobMs.push(j!.ms);
          jobRates.push(j!.removed / (j!.ms / 1000));
          batchMs.push(...j!.txMs);
          rawMs.push(r!.ms);
          rawRates.push(r!.removed / (r!.ms / 1000));
          rawBatchMs.push(...r!.batchMs);
          pairRatios.push(jobRates.at(-1)! / rawRates.at(-1)!);
          ctx.log(`delisted-retention: run ${i + 1}/${runs} (${jobFirst ? 'job' : 'raw'} first): job ${(j!.ms / 1000).toFixed(1)} s (${Math.round(jobRates.at(-1)!)} rows/s), raw ${(r!.ms / 1000).toFixed(1)} s (${Math.round(rawRates.at(-1)!)} rows/s), ${pairRatios.at(-1)!.toFixed(2)}×`);
        }
        const mem = agent.memory();
        ctx.memory.set('delisted-retention', { vmHWMKiB: mem.vmHWMKiB, maxSampledRssKiB: agent.maxSampledRssKiB, what: 'job-runner child, delisted-retention' });
      } finally {
        await agent.stop();
      }
      const c = 'delisted-retention';
      // the median of the per-run pair ratios, not median(job) / median(raw): those two medians may come
      // from different runs, i.e. from different states of the machine
      const rateRatio = median(pairRatios);
      const budgetMs = MAX_RUN_DURATION_MS / 20;
      const metrics: Metric[] = [
        sampled({ case: c, metric: 'delete rate (job)', unit: 'rows/s', ratio: rateRatio, ratioLabel: 'of raw SQL', budget: '≥ 0.7× raw SQL',
          pass: rateRatio >= 0.7, note: `ratio = median of the per-run ratios job/raw (${pairRatios.map((x) => x.toFixed(2)).join(' / ')}; run i's job and raw adjacent in time, alternating which goes first); rows = object cards + project cards + overrides (${expected.toLocaleString('en-US')} per run); autovacuum off on the 4 catalog tables; each side starts from the same layout (restore: VACUUM, re-insert into the freed places, VACUUM ANALYZE, CHECKPOINT); last summary ${JSON.stringify(lastSummary)}` }, jobRates),
        sampled({ case: c, metric: 'delete rate (raw SQL batched DELETEs)', unit: 'rows/s' }, rawRates),
        sampled({ case: c, metric: 'whole run', unit: 'ms', budget: `≤ ${budgetMs / 1000} s (MaxRunDuration/20)`, pass: median(jobMs) <= budgetMs }, jobMs),
        sampled({ case: c, metric: `batch of ${BATCH} (job transaction)`, unit: 'ms' }, batchMs),
        sampled({ case: c, metric: `batch of ${BATCH} (raw SQL, 1 statement)`, unit: 'ms',
          note: 'each raw DELETE statement of the measured runs, as the agent timed it (its own implicit transaction); the empty statement that ends each phase left out' }, rawBatchMs),
      ];
      return metrics;
    } finally {
      await sql.end({ timeout: 5 });
    }
  },
};
