import { sql, type SQL } from 'drizzle-orm';
import type { ReportInput, ReportScope } from './input';

/**
 * The SQL shapes every booking report shares: the cohort (bookings created in a period, with their step
 * flags and times) and its facts — the counters the report adds up, grouped per tenant, project and
 * breakdown. The daily rollup (crm's job reports-daily-rollup) stores the same facts per day, so a report
 * reads settled days from the rollup and the rest from crm.bookings and adds both up the same way.
 */

/** floor bands of the "sold share by floor" split (ground and basement floors count in the lowest band) */
export const FLOOR_BANDS = ['1-5', '6-10', '11-15', '16-20', '21+'] as const;
/** room-count buckets: 0 rooms is a studio */
export const ROOM_BUCKETS = ['studio', '1', '2', '3', '4+'] as const;
export type FloorBand = (typeof FLOOR_BANDS)[number];
export type RoomBucket = (typeof ROOM_BUCKETS)[number];

/** a half-open interval of creation times [from, to) */
export interface CreatedRange {
  from: Date;
  to: Date;
}

/** the tenant predicate of a report on a tenant_id column (see ReportScope) */
export function scopeSql(scope: ReportScope, column: SQL = sql`b.tenant_id`): SQL {
  const own = scope.own === null ? sql`TRUE` : sql`${column} = ${scope.own}::uuid`;
  const requested = scope.requested === null ? sql`TRUE` : sql`${column} = ${scope.requested}::uuid`;
  return sql`${own} AND ${requested}`;
}

function createdIn(ranges: CreatedRange[]): SQL {
  if (ranges.length === 0) return sql`FALSE`;
  const each = ranges.map((r) => sql`(b.created_at >= ${r.from.toISOString()}::timestamptz AND b.created_at < ${r.to.toISOString()}::timestamptz)`);
  return sql`(${sql.join(each, sql` OR `)})`;
}

/**
 * Up to this many days of creation read from crm.bookings, the cohort reaches each booking's deal and
 * object by one primary-key lookup; beyond, it leaves the joins to the planner. A few thousand bookings
 * (a month; the days of a year that the rollup does not cover) are a small part of crm.deals and
 * crm.property_objects, which hold a row for every booking ever made: as joins, the planner hash-joins
 * them with both whole tables, a read that grows with the history instead of with the period (a tenant's
 * year through the rollup: 2,466 raw bookings, cohort 273 → 45 ms). A longer span read whole (a project's
 * year, a year the rollup does not hold yet, a rollup cycle over 120 days of every tenant) is a large
 * part of those tables, and there the hash join is the cheaper plan (a project's year: 359 ms joined,
 * 1,041 ms by key).
 */
export const LOOKUP_BY_KEY_MAX_DAYS = 31;

const DAY_MS = 86_400_000;
const spanDays = (ranges: CreatedRange[]) => ranges.reduce((ms, r) => ms + (r.to.getTime() - r.from.getTime()), 0) / DAY_MS;

/**
 * The cohort's rows with their step flags and times: the one shape the funnel, the rollup and the plan
 * check read. `ranges` (default: the whole period) are the parts of the period read from crm.bookings.
 */
export function cohortSql(scope: ReportScope, input: Pick<ReportInput, 'from' | 'to' | 'projectId'>, ranges: CreatedRange[] = [input]): SQL {
  const project = input.projectId ? sql`AND po.project_id = ${input.projectId}::uuid` : sql``;
  // the same columns either way (an inner join to the deal, a left join to crm's object); OFFSET 0 keeps
  // the planner from turning the subqueries back into joins
  const lookups = spanDays(ranges) <= LOOKUP_BY_KEY_MAX_DAYS
    ? sql`CROSS JOIN LATERAL (SELECT d.agent_id FROM crm.v_deals d WHERE d.id = b.deal_id OFFSET 0) d
    LEFT JOIN LATERAL (SELECT po.project_id, po.floor, po.rooms FROM crm.v_property_objects po WHERE po.id = b.property_object_id OFFSET 0) po ON TRUE`
    : sql`JOIN crm.v_deals d ON d.id = b.deal_id
    LEFT JOIN crm.v_property_objects po ON po.id = b.property_object_id`;
  return sql`
    SELECT b.id, b.tenant_id, b.status, b.payment_status, b.created_at, b.booked_at, b.closed_at, b.closed_reason,
           d.agent_id, po.project_id,
           (b.created_at AT TIME ZONE 'UTC')::date AS day,
           CASE WHEN po.floor IS NULL THEN '' WHEN po.floor <= 5 THEN '1-5' WHEN po.floor <= 10 THEN '6-10'
                WHEN po.floor <= 15 THEN '11-15' WHEN po.floor <= 20 THEN '16-20' ELSE '21+' END AS floor_band,
           CASE WHEN po.rooms IS NULL THEN '' WHEN po.rooms = 0 THEN 'studio' WHEN po.rooms <= 3 THEN po.rooms::text ELSE '4+' END AS rooms_bucket,
           (b.booked_at IS NOT NULL OR b.payment_status IN ('ContractUploaded', 'ReceiptUploaded', 'Paid')) AS confirmed,
           (b.booked_at IS NOT NULL) AS paid,
           (b.status = 'Completed') AS sold,
           (b.payment_status <> 'NotRequired') AS paid_program,
           CASE
             WHEN b.payment_status = 'NotRequired' THEN b.booked_at
             WHEN b.payment_status = 'Pending' THEN NULL
             ELSE (SELECT min(tl.at) FROM crm.v_booking_timeline tl WHERE tl.booking_id = b.id AND tl.action = 'uploadContract')
           END AS confirmed_at
    FROM crm.v_bookings b
    ${lookups}
    WHERE ${scopeSql(scope)}
      AND ${createdIn(ranges)}
      ${project}`;
}

const COUNTERS = sql`
  count(*)::int AS bookings,
  count(*) FILTER (WHERE confirmed)::int AS confirmed,
  count(*) FILTER (WHERE paid)::int AS paid,
  count(*) FILTER (WHERE sold)::int AS sold,
  count(*) FILTER (WHERE status IN ('Reserved', 'AwaitingPayment', 'Booked'))::int AS active,
  count(*) FILTER (WHERE status = 'Cancelled')::int AS cancelled,
  count(*) FILTER (WHERE status = 'ReserveExpired')::int AS reserve_expired,
  count(*) FILTER (WHERE status = 'BookingExpired')::int AS booking_expired`;

// a step stamped by the application clock can precede a creation stamped by the database clock by a few
// milliseconds (or a row written by hand): a step never takes negative time
const seconds = (expr: SQL, filter: SQL) =>
  sql`array_agg(greatest(extract(epoch FROM ${expr}), 0)::double precision) FILTER (WHERE ${filter})`;

const NO_SECONDS = sql`NULL::double precision[], NULL::double precision[], NULL::double precision[]`;

/**
 * The facts of a cohort (a relation named `cohort`): columns [day,] tenant_id, project_id, dim, key, the
 * counters and the three duration arrays. dim `all`: the tenant's whole cohort, with every step duration
 * (medians stay exact); `project`: per project; `agent`, `floor`, `rooms`, `reason`: per tenant only
 * (project_id null) — split by project as well they would outnumber the bookings they sum up. With
 * `perDay` every group is split by the UTC day of creation: the rollup's rows.
 */
export function factsSql(perDay: boolean): SQL {
  const day = perDay ? sql`day, ` : sql``;
  const by = (extra: SQL) => sql`GROUP BY ${day}tenant_id${extra}`;
  return sql`
    SELECT ${day}tenant_id, NULL::uuid AS project_id, 'all' AS dim, '' AS key, ${COUNTERS},
           ${seconds(sql`confirmed_at - created_at`, sql`confirmed_at IS NOT NULL`)} AS confirm_secs,
           ${seconds(sql`booked_at - confirmed_at`, sql`paid_program AND booked_at IS NOT NULL AND confirmed_at IS NOT NULL`)} AS pay_secs,
           ${seconds(sql`closed_at - booked_at`, sql`sold AND booked_at IS NOT NULL`)} AS sell_secs
      FROM cohort ${by(sql``)}
    UNION ALL
    SELECT ${day}tenant_id, project_id, 'project', '', ${COUNTERS}, ${NO_SECONDS}
      FROM cohort ${by(sql`, project_id`)}
    UNION ALL
    SELECT ${day}tenant_id, NULL::uuid, 'agent', coalesce(agent_id::text, ''), ${COUNTERS}, ${NO_SECONDS}
      FROM cohort ${by(sql`, agent_id`)}
    UNION ALL
    SELECT ${day}tenant_id, NULL::uuid, 'floor', floor_band, ${COUNTERS}, ${NO_SECONDS}
      FROM cohort ${by(sql`, floor_band`)}
    UNION ALL
    SELECT ${day}tenant_id, NULL::uuid, 'rooms', rooms_bucket, ${COUNTERS}, ${NO_SECONDS}
      FROM cohort ${by(sql`, rooms_bucket`)}
    UNION ALL
    SELECT ${day}tenant_id, NULL::uuid, 'reason', btrim(coalesce(closed_reason, '')), ${COUNTERS}, ${NO_SECONDS}
      FROM cohort WHERE status = 'Cancelled' ${by(sql`, btrim(coalesce(closed_reason, ''))`)}`;
}

/** the rollup's columns in the order factsSql(true) yields them */
export const ROLLUP_COLUMNS = sql`day, tenant_id, project_id, dim, key, bookings, confirmed, paid, sold, active, cancelled,
  reserve_expired, booking_expired, confirm_secs, pay_secs, sell_secs`;

/** 'YYYY-MM-DD' of a UTC midnight */
export const dayString = (d: Date) => d.toISOString().slice(0, 10);
export const dayStart = (day: string) => new Date(`${day}T00:00:00.000Z`);

/**
 * The whole UTC days inside [from, to) — the only days a report may take from the rollup; the partial
 * days at the edges are always read from crm.bookings.
 */
export function wholeDays(from: Date, to: Date): { first: Date; end: Date } | null {
  const first = new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS);
  const end = new Date(Math.floor(to.getTime() / DAY_MS) * DAY_MS);
  return first.getTime() < end.getTime() ? { first, end } : null;
}

/** [from, to) without the given days (sorted 'YYYY-MM-DD', each a whole day inside it): the parts to read raw */
export function rangesWithout(from: Date, to: Date, days: string[]): CreatedRange[] {
  const ranges: CreatedRange[] = [];
  let cursor = from;
  for (const day of days) {
    const start = dayStart(day);
    if (cursor.getTime() < start.getTime()) ranges.push({ from: cursor, to: start });
    cursor = new Date(start.getTime() + DAY_MS);
  }
  if (cursor.getTime() < to.getTime()) ranges.push({ from: cursor, to });
  return ranges;
}
