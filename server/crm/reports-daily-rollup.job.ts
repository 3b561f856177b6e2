import { sql } from 'drizzle-orm';
import type { PlatformEnv } from '../platform/env';
import type { JobContext, JobDefinition, JobSummary } from '../platform/jobs/types';
import type { CrmEnv } from './env';
import { cohortSql, dayStart, dayString, factsSql, ROLLUP_COLUMNS } from '../reports/cohort';
import { ACTIVE_BOOKING_STATUSES } from './schema';

type CrmJobEnv = PlatformEnv & CrmEnv;

/**
 * Job `reports-daily-rollup`: keeps crm.booking_daily_rollup, the facts of the bookings created each UTC
 * day (the same facts reports.funnel adds up, docs/decisions/0024), so a quarter's or a year's report sums
 * a few rows per day instead of re-reading every booking with its deal, object and timeline.
 *
 * A cycle rolls up, in one statement, the days not yet rolled up (from the first booking, or the day after
 * the last rolled-up one, to the last day that has ended) and the days rolled up while some of their
 * bookings were still under way. A day is `settled` when none was: ended bookings never change (INV-BKG-8),
 * so its rows are final and reports read them; until then reports read the day from crm.bookings. The
 * facts and the settled flag come from one statement, hence one snapshot: a booking that ends while the
 * day is being rolled up leaves the day unsettled, to be rolled up again next cycle.
 *
 * Bookings are created with the current time, so a day that has ended gets no new ones; a script that
 * inserts past bookings (the seeds) clears the rollup. One instance at a time (an advisory lock; another
 * instance's cycle is skipped).
 */

export interface ReportsDailyRollupSummary extends JobSummary {
  DaysRolledUp: number;
  DaysSettled: number;
  SkippedLockedCount: number;
  HasMore: boolean;
}

/** a year of history goes in three cycles; one cycle is one scan of the bookings of its days */
const DAYS_PER_CYCLE = 120;
/** a day is rolled up once it ended this long ago: room for the skew between the app's and the database's clocks */
const ENDED_MARGIN_MS = 10 * 60_000;
const DAY_MS = 86_400_000;
// pg_try_advisory_xact_lock(classid, objid): one lock for the job, whatever the instance
const LOCK = sql`hashtext('crm.reports-daily-rollup'), 0`;
const ALL_TENANTS = { own: null, requested: null };

const addDays = (day: string, n: number) => dayString(new Date(dayStart(day).getTime() + n * DAY_MS));

export function createReportsDailyRollupJob(opts: { now?: () => Date } = {}): JobDefinition<CrmJobEnv> {
  return {
    name: 'reports-daily-rollup',
    schedule: (env) => ({ cron: env.REPORTS_DAILY_ROLLUP_SCHEDULE, timezone: 'UTC' }),
    isIdle: (s) => s.DaysRolledUp === 0 && s.SkippedLockedCount === 0,
    async run(ctx: JobContext<CrmJobEnv>): Promise<ReportsDailyRollupSummary> {
      const at = opts.now?.() ?? new Date();
      // the last UTC day that has ended
      const lastDay = dayString(new Date(Math.floor((at.getTime() - ENDED_MARGIN_MS) / DAY_MS) * DAY_MS - DAY_MS));
      return ctx.database.db.transaction(async (tx) => {
        const [lock] = await tx.execute<{ locked: boolean }>(sql`SELECT pg_try_advisory_xact_lock(${LOCK}) AS locked`);
        if (!lock?.locked) return { DaysRolledUp: 0, DaysSettled: 0, SkippedLockedCount: 1, HasMore: false };

        const unsettled = (await tx.execute<{ day: string }>(sql`
          SELECT day::text AS day FROM crm.booking_rollup_days WHERE NOT settled AND day <= ${lastDay}::date ORDER BY day LIMIT ${DAYS_PER_CYCLE + 1}`))
          .map((r) => r.day);
        const [edge] = await tx.execute<{ next: string | null }>(sql`
          SELECT coalesce((SELECT (max(day) + 1)::text FROM crm.booking_rollup_days),
                          (SELECT (min(created_at) AT TIME ZONE 'UTC')::date::text FROM crm.bookings)) AS next`);
        const fresh: string[] = [];
        for (let d = edge?.next ?? null; d !== null && d <= lastDay && unsettled.length + fresh.length <= DAYS_PER_CYCLE; d = addDays(d, 1)) fresh.push(d);
        const all = [...unsettled, ...fresh];
        const days = all.slice(0, DAYS_PER_CYCLE).sort();
        if (days.length === 0) return { DaysRolledUp: 0, DaysSettled: 0, SkippedLockedCount: 0, HasMore: false };

        const ranges = days.map((d) => ({ from: dayStart(d), to: new Date(dayStart(d).getTime() + DAY_MS) }));
        const period = { from: ranges[0]!.from, to: ranges[ranges.length - 1]!.to };
        const dayList = `{${days.join(',')}}`;
        const active = sql.join(ACTIVE_BOOKING_STATUSES.map((s) => sql`${s}`), sql`, `);
        const written = await tx.execute<{ settled: boolean }>(sql`
          WITH cohort AS MATERIALIZED (${cohortSql(ALL_TENANTS, period, ranges)}),
          gone AS (DELETE FROM crm.booking_daily_rollup WHERE day = ANY(${dayList}::date[])),
          added AS (INSERT INTO crm.booking_daily_rollup (${ROLLUP_COLUMNS}) ${factsSql(true)}),
          per_day AS (SELECT day, count(*)::int AS bookings, count(*) FILTER (WHERE status IN (${active}))::int AS active FROM cohort GROUP BY day)
          INSERT INTO crm.booking_rollup_days (day, settled, bookings, rolled_up_at)
          SELECT d.day, coalesce(p.active, 0) = 0, coalesce(p.bookings, 0), ${at.toISOString()}::timestamptz
            FROM unnest(${dayList}::date[]) AS d(day) LEFT JOIN per_day p ON p.day = d.day
          ON CONFLICT (day) DO UPDATE SET settled = excluded.settled, bookings = excluded.bookings, rolled_up_at = excluded.rolled_up_at
          RETURNING settled`);
        return {
          DaysRolledUp: written.length,
          DaysSettled: written.filter((r) => r.settled).length,
          SkippedLockedCount: 0,
          HasMore: all.length > DAYS_PER_CYCLE || (fresh.length > 0 && fresh[fresh.length - 1]! < lastDay),
        };
      });
    },
  };
}

export const reportsDailyRollupJob = createReportsDailyRollupJob();
