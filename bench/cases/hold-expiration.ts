import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import type postgres from 'postgres';
import { expiredHoldsCountQuery, selectExpiredHoldsForUpdate } from '../../server/chessboard/property-object-hold-expiration.sql';
import { Agent } from '../lib/agent-client';
import type { BenchCase, BenchContext } from '../lib/context';
import { rawClient, settle } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { median } from '../lib/stats';

/**
 * property-object-hold-expiration at 1,000,000 objects with 10,000 stuck holds past grace (half
 * Reserved, half Booked), and the same cycle at 10,000 objects. The job runs unchanged in the
 * job-runner child; the baseline is ONE SQL statement per phase doing the same writes (select …
 * skip locked → update → outbox + status history + hold_releases + project recalc request + NOTIFY)
 * on the same data, restored before every run from a saved copy of the held rows.
 */

const TABLES_TOUCHED = [
  'chessboard.property_objects', 'chessboard.projects', 'chessboard.outbox', 'chessboard.property_object_status_history',
  'chessboard.hold_releases', 'ops.job_runs',
];

/** Objects in buildings of 1,000 units over 10 projects; `stuck` holds spread evenly over the table. */
export async function createHoldDataset(sql: postgres.Sql, objects: number, stuck: number): Promise<void> {
  const buildings = Math.ceil(objects / 1000);
  const stride = Math.max(1, Math.floor(objects / stuck));
  await sql.unsafe(`CREATE SCHEMA IF NOT EXISTS bench`);
  await sql.unsafe(`
    INSERT INTO chessboard.projects (id, tenant_id, name, city)
    SELECT bench.uuid('bench:project:' || p), bench.uuid('bench:tenant:' || (p % 2)), 'Bench project ' || p, 'Bench'
    FROM generate_series(0, 9) p`);
  await sql.unsafe(`
    INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors)
    SELECT bench.uuid('bench:building:' || b), bench.uuid('bench:tenant:' || ((b % 10) % 2)), bench.uuid('bench:project:' || (b % 10)),
           'Building ' || b, 4, 25
    FROM generate_series(0, ${buildings - 1}) b`);
  // kinds: stuck (past grace, half Reserved / half Booked), held (timer in the future, 1%), Sold 10%, Hidden 2%, Free
  await sql.unsafe(`
    INSERT INTO chessboard.property_objects (id, tenant_id, project_id, building_id, section, floor, number, rooms, area, price, status,
      reserved_until, booked_until, hold_deal_id, hold_booking_id, sold_at, status_source, status_changed_at, updated_at, version)
    SELECT bench.uuid('bench:object:' || i), bench.uuid('bench:tenant:' || ((b % 10) % 2)), bench.uuid('bench:project:' || (b % 10)),
           bench.uuid('bench:building:' || b), u / 250 + 1, (u % 250) / 10 + 1, ((u / 250 + 1) * 10000 + ((u % 250) / 10 + 1) * 100 + u % 10)::text,
           u % 4, 30 + (u % 70), 5000000 + u * 1000,
           CASE kind WHEN 'stuckR' THEN 'Reserved' WHEN 'heldR' THEN 'Reserved' WHEN 'stuckB' THEN 'Booked' WHEN 'heldB' THEN 'Booked'
                     WHEN 'sold' THEN 'Sold' WHEN 'hidden' THEN 'Hidden' ELSE 'Free' END,
           CASE kind WHEN 'stuckR' THEN now() - interval '20 minutes' - (i % 7919) * interval '1 second'
                     WHEN 'heldR' THEN now() + interval '30 minutes' END,
           CASE kind WHEN 'stuckB' THEN now() - interval '20 minutes' - (i % 7919) * interval '1 second'
                     WHEN 'heldB' THEN now() + interval '2 days' END,
           CASE WHEN kind IN ('stuckR', 'stuckB', 'heldR', 'heldB') THEN bench.uuid('bench:deal:' || i) END,
           CASE WHEN kind IN ('stuckR', 'stuckB', 'heldR', 'heldB') THEN bench.uuid('bench:booking:' || i) END,
           CASE kind WHEN 'sold' THEN now() - interval '30 days' END,
           CASE WHEN kind IN ('stuckR', 'stuckB', 'heldR', 'heldB') THEN 'Crm' ELSE 'Import' END,
           now() - interval '3 hours', now() - interval '3 hours',
           CASE WHEN kind IN ('stuckR', 'stuckB', 'heldR', 'heldB') THEN 2 ELSE 1 END
    FROM (
      SELECT i, (i - 1) / 1000 AS b, (i - 1) % 1000 AS u,
             CASE WHEN i % ${stride} = 0 AND i / ${stride} <= ${stuck} THEN CASE WHEN (i / ${stride}) % 2 = 0 THEN 'stuckR' ELSE 'stuckB' END
                  WHEN i % 100 = 37 THEN CASE WHEN i % 200 = 37 THEN 'heldR' ELSE 'heldB' END
                  WHEN i % 10 = 3 THEN 'sold' WHEN i % 50 = 9 THEN 'hidden' ELSE 'free' END AS kind
      FROM generate_series(1, ${objects}) i
    ) s`);
  await sql.unsafe(`CREATE TABLE bench.saved_holds AS SELECT * FROM chessboard.property_objects WHERE status IN ('Reserved', 'Booked')`);
  await settle(sql, TABLES_TOUCHED);
}

/** Back to the saved state: the released holds are held again, the written rows are gone. */
async function restore(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`
    UPDATE chessboard.property_objects p SET status = s.status, reserved_until = s.reserved_until, booked_until = s.booked_until,
      hold_deal_id = s.hold_deal_id, hold_booking_id = s.hold_booking_id, sold_at = s.sold_at, status_source = s.status_source,
      status_changed_at = s.status_changed_at, updated_at = s.updated_at, version = s.version
    FROM bench.saved_holds s WHERE p.id = s.id AND p.version <> s.version`);
  await sql.unsafe(`TRUNCATE chessboard.outbox, chessboard.property_object_status_history, chessboard.hold_releases, ops.job_runs RESTART IDENTITY`);
  await sql.unsafe(`UPDATE chessboard.projects SET aggregates_recalc_requested_at = NULL WHERE aggregates_recalc_requested_at IS NOT NULL`);
  await settle(sql, TABLES_TOUCHED);
}

/**
 * One phase as a single statement: the job's candidate query (same predicate, order, limit, SKIP
 * LOCKED), its release (same columns, version check), and the same rows it writes: the
 * status-changed envelope in chessboard.outbox, a status-history row, a hold_releases row, the
 * project recalc request, and the NOTIFY. $1 grace ms, $2 batch size, $3 run id, $4 AsOf.
 */
export function rawPhaseStatement(phase: 'reserved' | 'booked'): string {
  const status = phase === 'reserved' ? 'Reserved' : 'Booked';
  const timer = phase === 'reserved' ? 'reserved_until' : 'booked_until';
  const timerName = phase === 'reserved' ? 'ReservedUntil' : 'BookedUntil';
  return `
    WITH picked AS (
      SELECT id, tenant_id, project_id, building_id, status, ${timer} AS timer, hold_deal_id, hold_booking_id, version
      FROM chessboard.property_objects
      WHERE status = '${status}' AND ${timer} < $4::timestamptz - $1::bigint * interval '1 millisecond'
      ORDER BY ${timer}, id
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    ), released AS (
      UPDATE chessboard.property_objects p
      SET status = 'Free', reserved_until = NULL, booked_until = NULL, hold_deal_id = NULL, hold_booking_id = NULL,
          status_source = 'ExpirationJob', status_changed_at = $4::timestamptz, updated_at = $4::timestamptz, version = p.version + 1
      FROM picked
      WHERE p.id = picked.id AND p.version = picked.version
      RETURNING p.id, p.tenant_id, p.project_id, p.building_id, p.version, picked.status AS from_status, picked.timer,
                picked.hold_deal_id, picked.hold_booking_id, gen_random_uuid() AS message_id
    ), outbox AS (
      INSERT INTO chessboard.outbox (message_id, topic, key, aggregate_type, aggregate_id, payload, headers)
      SELECT message_id, 'pin.chessboard.property-object-status-changed.v1', id::text, 'PropertyObject', id,
        jsonb_build_object('messageId', message_id, 'type', 'PropertyObjectStatusChanged', 'contractVersion', 1,
          'aggregateType', 'PropertyObject', 'aggregateId', id, 'occurredAt', $5::text, 'tenantId', tenant_id,
          'correlationId', $3::uuid, 'causationId', NULL,
          'payload', jsonb_build_object('propertyObjectId', id, 'tenantId', tenant_id, 'projectId', project_id, 'buildingId', building_id,
            'fromStatus', from_status, 'toStatus', 'Free', 'statusSource', 'ExpirationJob', 'reservedUntil', NULL, 'bookedUntil', NULL,
            'holdDealId', NULL, 'soldAt', NULL, 'statusChangedAt', $5::text, 'version', version)),
        jsonb_build_object('correlationId', $3::uuid, 'causationId', NULL, 'contractVersion', '1')
      FROM released
    ), history AS (
      INSERT INTO chessboard.property_object_status_history
        (property_object_id, tenant_id, from_status, to_status, status_source, at, booking_id, deal_id, reason, message_id, version)
      SELECT id, tenant_id, from_status, 'Free', 'ExpirationJob', $4::timestamptz, hold_booking_id, hold_deal_id,
             'hold-expiration: ${timerName} expired', message_id, version
      FROM released
    ), releases AS (
      INSERT INTO chessboard.hold_releases (property_object_id, tenant_id, project_id, hold_deal_id, from_status, expired_timer_at,
        overdue_by_ms, status_source, run_id, message_id, released_at)
      SELECT id, tenant_id, project_id, hold_deal_id, from_status, timer, (extract(epoch FROM $4::timestamptz - timer) * 1000)::bigint,
             'ExpirationJob', $3::uuid, message_id, $4::timestamptz
      FROM released
    ), recalc AS (
      UPDATE chessboard.projects SET aggregates_recalc_requested_at = coalesce(aggregates_recalc_requested_at, $4::timestamptz)
      WHERE id IN (SELECT project_id FROM released)
    )
    SELECT count(*)::int AS n, (SELECT count(*) FROM (SELECT pg_notify('pin_outbox_chessboard', '')) x)::int AS notified FROM released`;
}

const rawParams = (graceMs: number, batch: number) => {
  const asOf = new Date();
  return [graceMs, batch, randomUUID(), asOf.toISOString(), asOf.toISOString()];
};

interface ScaleResult {
  phaseMs: number[];
  rawMs: number[];
  cycleMs: number[];
  /** the job's candidate query alone (read-only: without FOR UPDATE), both phases */
  selectMs: number[];
  /** the job's two end-of-cycle backlog counts */
  countMs: number[];
  drain?: { jobMs: number; cycles: number; released: number; backlog: number; rawMs: number; rawReleased: number };
}

const GRACE_MS = 10 * 60_000;
const BATCH = 200;

/** One dataset: its database, a raw client for restores, and the job-runner child that runs the job and the raw statements. */
class Scale {
  readonly result: ScaleResult = { phaseMs: [], rawMs: [], cycleMs: [], selectMs: [], countMs: [] };
  private constructor(readonly label: string, readonly stuck: number, readonly sql: postgres.Sql, readonly agent: Agent) {}

  static async prepare(ctx: BenchContext, label: string, objects: number, stuck: number): Promise<Scale> {
    const url = await ctx.databases.create(`hold_${label}`);
    const sql = rawClient(url);
    ctx.log(`hold-expiration @${label}: generating ${objects.toLocaleString('en-US')} objects, ${stuck.toLocaleString('en-US')} stuck holds`);
    const t0 = performance.now();
    await createHoldDataset(sql, objects, stuck);
    const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chessboard.property_objects
      WHERE (status = 'Reserved' AND reserved_until < now() - interval '10 minutes') OR (status = 'Booked' AND booked_until < now() - interval '10 minutes')`;
    if (n !== stuck) throw new Error(`dataset has ${n} stuck holds, expected ${stuck}`);
    ctx.log(`hold-expiration @${label}: dataset ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const agent = await Agent.start(`hold-${label}`, ctx.workerEnv(url, ''), path.join(ctx.logDir, `agent-hold-${label}.log`));
    return new Scale(label, stuck, sql, agent);
  }

  restore(): Promise<void> {
    return restore(this.sql);
  }

  async job(expectFullBatches = true) {
    const r = await this.agent.job('property-object-hold-expiration');
    if (r.status !== 'succeeded') throw new Error(`hold-expiration cycle ${r.status}: ${r.error}`);
    const released = Number(r.summary.ReservedReleasedCount) + Number(r.summary.BookedReleasedCount);
    if (expectFullBatches && released !== Math.min(2 * BATCH, this.stuck)) throw new Error(`cycle released ${released}`);
    if (r.txMs.length !== 2) throw new Error(`expected 2 phase transactions, saw ${r.txMs.length}`);
    return { ...r, released };
  }

  async raw(): Promise<number[]> {
    const out: number[] = [];
    for (const phase of ['reserved', 'booked'] as const) {
      const r = await this.agent.sql(rawPhaseStatement(phase), rawParams(GRACE_MS, BATCH));
      if (Number(r.rows[0]?.n) !== Math.min(BATCH, this.stuck / 2)) throw new Error(`raw ${phase} phase released ${r.rows[0]?.n}`);
      out.push(r.ms);
    }
    return out;
  }

  /**
   * The reads whose cost the partial indexes are meant to keep flat, timed on their own: the job's
   * candidate query (its SQL from selectExpiredHoldsForUpdate, without the row locks) and the backlog
   * counts it runs at the end of a cycle (countExpiredHolds' statement), for both phases.
   */
  async probeReads(): Promise<void> {
    const cutoff = new Date(Date.now() - GRACE_MS);
    const drz = drizzle(this.sql);
    let select = 0;
    let count = 0;
    for (const phase of ['reserved', 'booked'] as const) {
      const q = selectExpiredHoldsForUpdate(drz as never, phase, cutoff, BATCH).toSQL();
      const text = q.sql.replace(/ for update skip locked$/i, '');
      if (text === q.sql) throw new Error(`unexpected candidate query: ${q.sql}`);
      const r = await this.agent.sql(text, q.params.map((p) => (p instanceof Date ? p.toISOString() : p)));
      if (r.rows.length !== Math.min(BATCH, this.stuck / 2)) throw new Error(`candidate query returned ${r.rows.length} rows`);
      select += r.ms;
      // the job's own statement (countExpiredHolds), not a copy of its predicate
      const cq = expiredHoldsCountQuery(drz as never, phase, cutoff).toSQL();
      const c = await this.agent.sql(cq.sql, cq.params.map((p) => (p instanceof Date ? p.toISOString() : p)));
      count += c.ms;
    }
    this.result.selectMs.push(select);
    this.result.countMs.push(count);
  }

  /** A measured run: the job's cycle and the raw statements, each from the restored state. */
  async measure(): Promise<void> {
    await this.restore();
    await this.probeReads();
    const j = await this.job();
    this.result.phaseMs.push(...j.txMs);
    this.result.cycleMs.push(j.ms);
    await this.restore();
    const raw = await this.raw();
    this.result.rawMs.push(...raw);
  }

  /** All stuck holds: job cycles until the backlog is 0, then the raw statements until nothing is left. */
  async drain(): Promise<NonNullable<ScaleResult['drain']>> {
    await this.restore();
    let cycles = 0;
    let released = 0;
    let backlog = -1;
    const t1 = performance.now();
    while (cycles < Math.ceil(this.stuck / (2 * BATCH)) + 5) {
      const r = await this.job(false);
      cycles += 1;
      released += r.released;
      backlog = Number(r.summary.Backlog);
      if (backlog === 0) break;
    }
    const jobMs = performance.now() - t1;
    await this.restore();
    let rawReleased = 0;
    const t2 = performance.now();
    for (const phase of ['reserved', 'booked'] as const) {
      const r = await this.agent.sql(rawPhaseStatement(phase), rawParams(GRACE_MS, BATCH), true);
      rawReleased += r.rows.reduce((a, row) => a + Number(row.n), 0);
    }
    const rawMs = performance.now() - t2;
    return { jobMs, cycles, released, backlog, rawMs, rawReleased };
  }

  async close(): Promise<void> {
    await this.agent.stop();
    await this.sql.end({ timeout: 5 });
  }
}

export const holdExpirationCase: BenchCase = {
  name: 'hold-expiration',
  title: 'property-object-hold-expiration cycle',
  async run(ctx) {
    const big = ctx.scale(1_000_000);
    const stuck = ctx.scale(10_000);
    const small = ctx.scale(10_000);
    const bigLabel = ctx.quick ? '100k' : '1M';
    const smallLabel = ctx.quick ? '1k' : '10k';
    // both datasets are measured in the same time window, run after run (job and raw SQL alternately,
    // 1M and 10k alternately), so a change of the machine's load hits both sides of every ratio alike
    const scales: Scale[] = [];
    let atBig: ScaleResult;
    let atSmall: ScaleResult;
    try {
      scales.push(await Scale.prepare(ctx, bigLabel, big, stuck));
      scales.push(await Scale.prepare(ctx, smallLabel, small, stuck));
      const [b, sm] = scales;
      for (const x of scales) { await x.restore(); await x.job(); await x.restore(); await x.raw(); } // warm-up
      const runs = ctx.runs * 2; // a run takes about a second: twice the runs for steadier medians
      for (let i = 0; i < runs; i++) {
        for (const x of scales) await x.measure();
        ctx.log(`hold-expiration: run ${i + 1}/${runs}: ${scales.map((x) => `@${x.label} cycle ${x.result.cycleMs.at(-1)!.toFixed(0)} ms, phases ${x.result.phaseMs.slice(-2).map((v) => v.toFixed(0)).join('/')} ms, raw ${x.result.rawMs.slice(-2).map((v) => v.toFixed(0)).join('/')} ms`).join('; ')}`);
      }
      b.result.drain = await b.drain();
      const d = b.result.drain;
      ctx.log(`hold-expiration @${b.label}: drained ${d.released} in ${d.cycles} cycles, ${(d.jobMs / 1000).toFixed(1)} s (raw ${(d.rawMs / 1000).toFixed(1)} s)`);
      const mem = b.agent.memory();
      ctx.memory.set('hold-expiration', { vmHWMKiB: mem.vmHWMKiB, maxSampledRssKiB: b.agent.maxSampledRssKiB, what: `job-runner child, hold-expiration @${b.label}` });
      atBig = b.result;
      atSmall = sm.result;
    } finally {
      for (const x of scales) await x.close();
    }
    const c = 'hold-expiration';
    const phaseRatio = median(atBig.phaseMs) / median(atBig.rawMs);
    const scaleRatio = median(atBig.cycleMs) / median(atSmall.cycleMs);
    const metrics: Metric[] = [
      sampled({ case: c, metric: `phase of ${BATCH} @${bigLabel} (job transaction)`, unit: 'ms', ratio: phaseRatio, ratioLabel: 'of raw SQL',
        budget: '≤ 2× raw SQL', pass: phaseRatio <= 2 }, atBig.phaseMs),
      sampled({ case: c, metric: `phase of ${BATCH} @${bigLabel} (raw SQL, 1 statement)`, unit: 'ms' }, atBig.rawMs),
      sampled({ case: c, metric: `cycle (2 phases) @${bigLabel}`, unit: 'ms', ratio: scaleRatio, ratioLabel: `of @${smallLabel}`,
        budget: `≤ 1.2× cycle @${smallLabel}`, pass: scaleRatio <= 1.2 }, atBig.cycleMs),
      sampled({ case: c, metric: `cycle (2 phases) @${smallLabel}`, unit: 'ms' }, atSmall.cycleMs),
      sampled({ case: c, metric: `candidate queries (partial index, both phases) @${bigLabel}`, unit: 'ms',
        ratio: median(atBig.selectMs) / median(atSmall.selectMs), ratioLabel: `of @${smallLabel}` }, atBig.selectMs),
      sampled({ case: c, metric: `backlog counts (both phases) @${bigLabel}`, unit: 'ms',
        ratio: median(atBig.countMs) / median(atSmall.countMs), ratioLabel: `of @${smallLabel}` }, atBig.countMs),
      sampled({ case: c, metric: `phase of ${BATCH} @${smallLabel} (job transaction)`, unit: 'ms',
        ratio: median(atSmall.phaseMs) / median(atSmall.rawMs), ratioLabel: 'of raw SQL' }, atSmall.phaseMs),
    ];
    const d = atBig.drain!;
    metrics.push({
      case: c, metric: `drain ${stuck.toLocaleString('en-US')} stuck @${bigLabel}`, unit: 's', value: d.jobMs / 1000,
      ratio: d.jobMs / d.rawMs, ratioLabel: 'of raw SQL', budget: 'drains all', pass: d.backlog === 0 && d.released === stuck,
      note: `${d.released} released in ${d.cycles} cycles (${Math.round((d.released / d.jobMs) * 1000)} holds/s); raw SQL ${d.rawReleased} in ${(d.rawMs / 1000).toFixed(2)} s`,
    });
    return metrics;
  },
};
