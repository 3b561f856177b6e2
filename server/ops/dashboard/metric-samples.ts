import { and, asc, gte, inArray, lt, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../platform/db';
import { metricSamples } from '../schema';

/**
 * Trend history behind the dashboard's sparklines. Samples are written at most once per
 * SAMPLE_INTERVAL_MS whoever asks (the reconciliation job every 5 min, every overview read of a
 * cross-tenant user): a transaction-level advisory lock makes concurrent writers take turns, and a
 * writer that finds a sample younger than the interval writes nothing.
 */
export const SAMPLE_INTERVAL_MS = 60_000;
export const SAMPLE_RETENTION_MS = 30 * 24 * 3600_000;

const SAMPLE_LOCK = 'ops:metric-samples';

export type Samples = Record<string, number>;

/** Writes `values` as one sample each, unless the last sample is younger than the interval. Returns whether it wrote. */
export async function recordSamples(db: Db, values: Samples, now: Date = new Date()): Promise<boolean> {
  const names = Object.keys(values);
  if (names.length === 0) return false;
  return db.transaction(async (tx) => {
    const [{ locked }] = await tx.execute<{ locked: boolean }>(sql`SELECT pg_try_advisory_xact_lock(hashtext(${SAMPLE_LOCK})) AS locked`);
    if (!locked) return false;
    const since = new Date(now.getTime() - SAMPLE_INTERVAL_MS + 1000);
    const [{ n }] = await tx.execute<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM ${metricSamples} WHERE ${metricSamples.at} > ${since.toISOString()}::timestamptz AND ${metricSamples.at} <= ${now.toISOString()}::timestamptz`);
    if (n > 0) return false;
    await tx.insert(metricSamples).values(names.filter((name) => Number.isFinite(values[name])).map((name) => ({ name, value: values[name], at: now })));
    return true;
  });
}

export interface TrendPoint {
  at: Date;
  value: number;
}

/**
 * The samples of `names` since `since`, thinned to at most `points` per name (the last sample of each
 * time bucket), oldest first.
 */
export async function readTrends(db: DbOrTx, names: string[], since: Date, points = 60): Promise<Record<string, TrendPoint[]>> {
  const out: Record<string, TrendPoint[]> = Object.fromEntries(names.map((n) => [n, []]));
  if (names.length === 0) return out;
  const rows = await db
    .select({ name: metricSamples.name, value: metricSamples.value, at: metricSamples.at })
    .from(metricSamples)
    .where(and(inArray(metricSamples.name, names), gte(metricSamples.at, since)))
    .orderBy(asc(metricSamples.at));
  for (const r of rows) out[r.name]!.push({ at: r.at, value: r.value });
  for (const name of names) out[name] = thin(out[name]!, points);
  return out;
}

/** Keeps the last point of each of `points` equal time buckets (a sparkline needs no more). */
export function thin(series: TrendPoint[], points: number): TrendPoint[] {
  if (series.length <= points) return series;
  const first = series[0]!.at.getTime();
  const span = series[series.length - 1]!.at.getTime() - first || 1;
  const buckets = new Map<number, TrendPoint>();
  for (const p of series) buckets.set(Math.min(points - 1, Math.floor(((p.at.getTime() - first) / span) * points)), p);
  return [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([, p]) => p);
}

/** Daily closing values (the last sample of each UTC day), oldest first: the input of "growing N days in a row". */
export async function dailyClosingValues(db: DbOrTx, name: string, days: number, now: Date = new Date()): Promise<{ day: string; value: number }[]> {
  const since = new Date(now.getTime() - days * 24 * 3600_000);
  const rows = await db.execute<{ day: string; value: number }>(sql`
    SELECT DISTINCT ON (date_trunc('day', at AT TIME ZONE 'UTC')) to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, value
    FROM ${metricSamples}
    WHERE name = ${name} AND at >= ${since.toISOString()}::timestamptz AND at <= ${now.toISOString()}::timestamptz
    ORDER BY date_trunc('day', at AT TIME ZONE 'UTC'), at DESC`);
  return rows.map((r) => ({ day: r.day, value: Number(r.value) })).sort((a, b) => a.day.localeCompare(b.day));
}

export async function pruneSamples(db: DbOrTx, now: Date = new Date()): Promise<number> {
  const res = await db.delete(metricSamples).where(lt(metricSamples.at, new Date(now.getTime() - SAMPLE_RETENTION_MS))).returning({ id: metricSamples.id });
  return res.length;
}
