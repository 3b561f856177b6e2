import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Actor } from '../auth/actor';
import { userNames } from '../auth/sign-in';
import type { Db } from '../platform/db';
import { cohortSql, factsSql, FLOOR_BANDS, rangesWithout, ROOM_BUCKETS, scopeSql, wholeDays, type CreatedRange } from './cohort';
import { reportScope, type ReportInput } from './input';

/**
 * The booking funnel of a period, from crm's own tables (bookings, booking_timeline, deals, crm's
 * property object projection) — never from the chessboard: these are the sales as crm recorded them.
 *
 * The cohort is the bookings CREATED in [from, to); every other figure says what became of them (so a
 * period's numbers do not move when you look again later, except for bookings still under way).
 * Steps, each "reached at least":
 *   created    every booking of the cohort
 *   confirmed  the developer accepted it: a free program's booking was confirmed (Booked), a paid
 *              program's got its contract (AwaitingPayment and on)
 *   paid       the money side is settled: Booked through confirm (free program, nothing to pay) or
 *              through confirmPayment (paid program, PaymentStatus Paid)
 *   sold       the sale started (Completed)
 * Median times between the steps: created → confirmed (the confirm, or the contract's upload in the
 * timeline), confirmed → paid (paid programs only: a free program's two steps are one click),
 * paid → sold (booked_at → closed_at of Completed).
 */

const CANCEL_REASONS_SHOWN = 10;
// the rows of the tables (a tenant has tens of agents and projects; the cut only bounds the answer)
const AGENTS_SHOWN = 200;
const PROJECTS_SHOWN = 200;

const count = z.number().int().nonnegative();
/** a share 0…1, null when its base is 0 */
const ratio = z.number().min(0).max(1).nullable();
const seconds = z.number().nonnegative().nullable();

export const funnelOutput = z.object({
  from: z.date(),
  to: z.date(),
  tenantId: z.uuid().nullable(),
  projectId: z.uuid().nullable(),
  created: count,
  confirmed: count,
  paid: count,
  sold: count,
  expired: count,
  cancelled: count,
  /** still Reserved, AwaitingPayment or Booked */
  active: count,
  conversion: z.object({
    confirmedOfCreated: ratio,
    paidOfConfirmed: ratio,
    soldOfPaid: ratio,
    soldOfCreated: ratio,
  }),
  medianSeconds: z.object({ createdToConfirmed: seconds, confirmedToPaid: seconds, paidToSold: seconds }),
  expirations: z.object({
    /** ReserveExpired: the reserve (or the wait for payment) ran out */
    reservePhase: count,
    /** BookingExpired: the booking ran out before the sale */
    bookingPhase: count,
  }),
  cancellations: z.object({
    total: count,
    /** the most frequent reasons as written by whoever cancelled (trimmed), most frequent first */
    reasons: z.array(z.object({ reason: z.string(), count })).max(CANCEL_REASONS_SHOWN),
    /** cancellations whose reason is not among `reasons` */
    otherCount: count,
  }),
  agents: z.array(z.object({
    /** null: deals without an agent (the developer's own sales) */
    agentId: z.uuid().nullable(),
    name: z.string().nullable(),
    bookings: count,
    confirmed: count,
    sold: count,
    expired: count,
    cancelled: count,
    /** sold of bookings */
    conversion: ratio,
  })).max(AGENTS_SHOWN),
  /** sold share by project */
  projects: z.array(z.object({ projectId: z.uuid().nullable(), bookings: count, sold: count, soldShare: ratio })).max(PROJECTS_SHOWN),
  /** sold share by floor band, low to high; band null: objects whose floor crm does not know (yet) */
  floors: z.array(z.object({ band: z.enum(FLOOR_BANDS).nullable(), bookings: count, sold: count, soldShare: ratio })).max(FLOOR_BANDS.length + 1),
  /** sold share by room count (studio, 1, 2, 3, 4+); rooms null: not known (yet) */
  rooms: z.array(z.object({ rooms: z.enum(ROOM_BUCKETS).nullable(), bookings: count, sold: count, soldShare: ratio })).max(ROOM_BUCKETS.length + 1),
});
export type FunnelReport = z.infer<typeof funnelOutput>;


export { cohortSql, scopeSql } from './cohort';

type Counters = { bookings: number; confirmed: number; sold: number };

interface Row {
  funnel: {
    created: number; confirmed: number; paid: number; sold: number; active: number; cancelled: number;
    reserve_expired: number; booking_expired: number;
    m_confirm: number | null; m_pay: number | null; m_sell: number | null;
  };
  reasons: Array<{ reason: string; count: number }>;
  agents: Array<{ agent_id: string | null; bookings: number; confirmed: number; sold: number; expired: number; cancelled: number }>;
  projects: Array<{ project_id: string | null } & Counters>;
  floors: Array<{ band: (typeof FLOOR_BANDS)[number] | null } & Counters>;
  rooms: Array<{ rooms: (typeof ROOM_BUCKETS)[number] | null } & Counters>;
}

const share = (part: number, whole: number) => (whole > 0 ? part / whole : null);

/** Where a report's days come from: the settled whole days from the rollup, everything else from crm.bookings. */
export interface FunnelSources {
  rolledUpDays: string[];
  raw: CreatedRange[];
}

/**
 * The settled days of the rollup inside the period's whole UTC days. A day is settled only when every
 * booking created that day had ended when it was rolled up; ended bookings never change (INV-BKG-8), so
 * the rollup's rows of such a day are what crm.bookings says now. Read before the report's statement: a
 * day that settles in between is read raw (still the truth); a settled day never becomes unsettled.
 */
export async function funnelSources(db: Db, input: Pick<ReportInput, 'from' | 'to'>, useRollup = true): Promise<FunnelSources> {
  const whole = useRollup ? wholeDays(input.from, input.to) : null;
  if (!whole) return { rolledUpDays: [], raw: [{ from: input.from, to: input.to }] };
  const rows = await db.execute<{ day: string }>(sql`
    SELECT day::text AS day FROM crm.v_booking_rollup_days
     WHERE settled AND day >= ${whole.first.toISOString()}::date AND day < ${whole.end.toISOString()}::date ORDER BY day`);
  const days = rows.map((r) => r.day);
  return { rolledUpDays: days, raw: rangesWithout(input.from, input.to, days) };
}

const sumOf = (column: string) => sql.raw(`coalesce(sum(${column}), 0)::int`);
const medianOf = (column: string) =>
  sql.raw(`(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM durations f, unnest(f.${column}) s)`);
const bandOrder = (values: readonly string[]) => sql.raw(`array_position(ARRAY[${values.map((v) => `'${v}'`).join(', ')}], key)`);

/**
 * One statement: the raw part of the cohort (a range scan of ix_bookings_tenant_created per part) turned
 * into facts, the rollup's facts of the settled days added, and every table of the report summed from
 * them. `useRollup: false` reads the whole period from crm.bookings (the tests compare both answers), as
 * does a report on one project (the rollup splits agents, floors, rooms and reasons per tenant only).
 */
export async function funnelReport(db: Db, actor: Actor, input: ReportInput, opts: { useRollup?: boolean } = {}): Promise<FunnelReport> {
  const scope = reportScope(actor, input);
  // the rollup's breakdowns are per tenant, not per project: a project's report is read from crm.bookings
  const sources = await funnelSources(db, input, opts.useRollup !== false && !input.projectId);
  const rolledUp = sql`r.day = ANY(${`{${sources.rolledUpDays.join(',')}}`}::date[]) AND ${scopeSql(scope, sql`r.tenant_id`)}`;
  const [row] = await db.execute<Row & Record<string, unknown>>(sql`
    WITH cohort AS MATERIALIZED (${cohortSql(scope, input, sources.raw)}),
    facts AS MATERIALIZED (
      ${factsSql(false)}
      UNION ALL
      -- the rollup's days summed per breakdown here, once: a tenant's year is some 23,000 rollup rows (the
      -- agents' alone 10,000) and the tables below would each filter and sort them again; summed, ~100
      SELECT r.tenant_id, r.project_id, r.dim, r.key, ${sumOf('r.bookings')}, ${sumOf('r.confirmed')}, ${sumOf('r.paid')}, ${sumOf('r.sold')},
             ${sumOf('r.active')}, ${sumOf('r.cancelled')}, ${sumOf('r.reserve_expired')}, ${sumOf('r.booking_expired')},
             NULL::double precision[], NULL::double precision[], NULL::double precision[]
        FROM crm.v_booking_daily_rollup r
       WHERE ${rolledUp}
       GROUP BY r.tenant_id, r.project_id, r.dim, r.key
    ),
    -- every step duration of the cohort (the medians are exact): the raw part's and each rolled-up day's
    durations AS MATERIALIZED (
      SELECT confirm_secs, pay_secs, sell_secs FROM facts WHERE dim = 'all'
      UNION ALL
      SELECT r.confirm_secs, r.pay_secs, r.sell_secs FROM crm.v_booking_daily_rollup r WHERE ${rolledUp} AND r.dim = 'all'
    )
    SELECT
      (SELECT json_build_object(
         'created', ${sumOf('bookings')}, 'confirmed', ${sumOf('confirmed')}, 'paid', ${sumOf('paid')}, 'sold', ${sumOf('sold')},
         'active', ${sumOf('active')}, 'cancelled', ${sumOf('cancelled')},
         'reserve_expired', ${sumOf('reserve_expired')}, 'booking_expired', ${sumOf('booking_expired')},
         'm_confirm', ${medianOf('confirm_secs')}, 'm_pay', ${medianOf('pay_secs')}, 'm_sell', ${medianOf('sell_secs')}
       ) FROM facts WHERE dim = 'all') AS funnel,
      (SELECT coalesce(json_agg(r ORDER BY r.count DESC, r.reason), '[]'::json) FROM (
         SELECT key AS reason, ${sumOf('cancelled')} AS count
         FROM facts WHERE dim = 'reason' GROUP BY key ORDER BY 2 DESC, 1 LIMIT ${CANCEL_REASONS_SHOWN}
       ) r) AS reasons,
      (SELECT coalesce(json_agg(a ORDER BY a.bookings DESC, a.agent_id NULLS LAST), '[]'::json) FROM (
         SELECT nullif(key, '')::uuid AS agent_id, ${sumOf('bookings')} AS bookings, ${sumOf('confirmed')} AS confirmed, ${sumOf('sold')} AS sold,
                ${sumOf('reserve_expired + booking_expired')} AS expired, ${sumOf('cancelled')} AS cancelled
         FROM facts WHERE dim = 'agent' GROUP BY 1 ORDER BY 2 DESC, 1 NULLS LAST LIMIT ${AGENTS_SHOWN}
       ) a) AS agents,
      (SELECT coalesce(json_agg(p ORDER BY p.bookings DESC, p.project_id NULLS LAST), '[]'::json) FROM (
         SELECT project_id, ${sumOf('bookings')} AS bookings, ${sumOf('confirmed')} AS confirmed, ${sumOf('sold')} AS sold
         FROM facts WHERE dim = 'project' GROUP BY project_id ORDER BY 2 DESC, 1 NULLS LAST LIMIT ${PROJECTS_SHOWN}
       ) p) AS projects,
      (SELECT coalesce(json_agg(x ORDER BY x.o), '[]'::json) FROM (
         SELECT nullif(key, '') AS band, ${sumOf('bookings')} AS bookings, ${sumOf('confirmed')} AS confirmed, ${sumOf('sold')} AS sold, ${bandOrder(FLOOR_BANDS)} AS o
         FROM facts WHERE dim = 'floor' GROUP BY key
       ) x) AS floors,
      (SELECT coalesce(json_agg(x ORDER BY x.o), '[]'::json) FROM (
         SELECT nullif(key, '') AS rooms, ${sumOf('bookings')} AS bookings, ${sumOf('confirmed')} AS confirmed, ${sumOf('sold')} AS sold, ${bandOrder(ROOM_BUCKETS)} AS o
         FROM facts WHERE dim = 'rooms' GROUP BY key
       ) x) AS rooms`);
  const { funnel: f, reasons, agents, projects, floors, rooms } = row as unknown as Row;
  const agentIds = agents.map((a) => a.agent_id).filter((id): id is string => id !== null);
  const names = await userNames(db, actor, agentIds);
  const listed = reasons.reduce((n, r) => n + r.count, 0);
  return {
    from: input.from,
    to: input.to,
    tenantId: scope.requested ?? scope.own,
    projectId: input.projectId ?? null,
    created: f.created,
    confirmed: f.confirmed,
    paid: f.paid,
    sold: f.sold,
    expired: f.reserve_expired + f.booking_expired,
    cancelled: f.cancelled,
    active: f.active,
    conversion: {
      confirmedOfCreated: share(f.confirmed, f.created),
      paidOfConfirmed: share(f.paid, f.confirmed),
      soldOfPaid: share(f.sold, f.paid),
      soldOfCreated: share(f.sold, f.created),
    },
    medianSeconds: { createdToConfirmed: f.m_confirm, confirmedToPaid: f.m_pay, paidToSold: f.m_sell },
    expirations: { reservePhase: f.reserve_expired, bookingPhase: f.booking_expired },
    cancellations: { total: f.cancelled, reasons, otherCount: f.cancelled - listed },
    agents: agents.map((a) => ({
      agentId: a.agent_id,
      name: a.agent_id ? names[a.agent_id] ?? null : null,
      bookings: a.bookings,
      confirmed: a.confirmed,
      sold: a.sold,
      expired: a.expired,
      cancelled: a.cancelled,
      conversion: share(a.sold, a.bookings),
    })),
    projects: projects.map((p) => ({ projectId: p.project_id, bookings: p.bookings, sold: p.sold, soldShare: share(p.sold, p.bookings) })),
    floors: floors.map((x) => ({ band: x.band, bookings: x.bookings, sold: x.sold, soldShare: share(x.sold, x.bookings) })),
    rooms: rooms.map((x) => ({ rooms: x.rooms, bookings: x.bookings, sold: x.sold, soldShare: share(x.sold, x.bookings) })),
  };
}
