import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db';
import { num, tenantFilter, toDate, ts, type TenantScope } from './sql';

/** Ops read side: stuck holds, lost and manual releases, hold mismatches (chessboard's tables, read-only). */

/* ---------------------------------------------------------------------------------------------
 * Stuck holds: held objects whose timer has passed. "in grace" = within HoldGrace after the timer (the
 * CRM release is still expected); "past grace" = what property-object-hold-expiration selects
 * (timer + HoldGrace < AsOf), the same set as the gauge chessboard_property_object_hold_expiration_backlog.
 * ------------------------------------------------------------------------------------------- */

const overdueHold = (now: Date) =>
  sql`((po.status = 'Reserved' AND po.reserved_until < ${ts(now)}) OR (po.status = 'Booked' AND po.booked_until < ${ts(now)}))`;

export interface StuckHoldsSummary {
  inGrace: number;
  pastGrace: number;
  /** the oldest expired timer among the overdue holds */
  oldestTimer: Date | null;
  graceMs: number;
}

export async function getStuckHoldsSummary(db: DbOrTx, input: { now: Date; graceMs: number; scope: TenantScope }): Promise<StuckHoldsSummary> {
  const cutoff = new Date(input.now.getTime() - input.graceMs);
  const [r] = await db.execute<{ in_grace: number; past_grace: number; oldest: string | null }>(sql`
    SELECT count(*) FILTER (WHERE timer >= ${ts(cutoff)})::int AS in_grace,
           count(*) FILTER (WHERE timer < ${ts(cutoff)})::int AS past_grace,
           min(timer) AS oldest
    FROM (SELECT coalesce(po.reserved_until, po.booked_until) AS timer
          FROM chessboard.v_property_objects po
          WHERE ${overdueHold(input.now)} AND ${tenantFilter(sql`po.tenant_id`, input.scope)}) x`);
  return { inGrace: num(r.in_grace), pastGrace: num(r.past_grace), oldestTimer: toDate(r.oldest), graceMs: input.graceMs };
}

export const STUCK_HOLD_SORTS = ['overdue', 'number', 'project', 'tenant', 'status', 'timer'] as const;
export type StuckHoldSort = (typeof STUCK_HOLD_SORTS)[number];

export interface StuckHoldsFilter {
  phase?: 'all' | 'inGrace' | 'pastGrace';
  status?: 'Reserved' | 'Booked';
  tenantId?: string;
  projectId?: string;
  /** object number (prefix) */
  number?: string;
  /** 'yes': crm still has an active booking for the object; 'no': it has none */
  crmActive?: 'yes' | 'no';
  sort?: StuckHoldSort;
  dir?: 'asc' | 'desc';
  limit?: number;
}

export interface StuckHoldRow {
  propertyObjectId: string;
  number: string;
  tenantId: string;
  tenantName: string | null;
  projectId: string;
  projectName: string;
  buildingId: string;
  buildingName: string;
  status: 'Reserved' | 'Booked';
  timer: Date;
  overdueByMs: number;
  pastGrace: boolean;
  holdDealId: string | null;
  holdBookingId: string | null;
  statusChangedAt: Date;
  /** crm's active booking of the object (any deal), if any */
  crmActiveBooking: { id: string; status: string; dealId: string; holdsThisDeal: boolean } | null;
  /** the crm booking of the hold (object + hold deal, newest): the saga timeline to open */
  holdBooking: { id: string; status: string } | null;
}

export async function listStuckHolds(
  db: DbOrTx,
  input: { now: Date; graceMs: number; scope: TenantScope; filter?: StuckHoldsFilter },
): Promise<StuckHoldRow[]> {
  const f = input.filter ?? {};
  const cutoff = new Date(input.now.getTime() - input.graceMs);
  const where: SQL[] = [overdueHold(input.now), tenantFilter(sql`po.tenant_id`, input.scope)];
  if (f.phase === 'inGrace') where.push(sql`coalesce(po.reserved_until, po.booked_until) >= ${ts(cutoff)}`);
  if (f.phase === 'pastGrace') where.push(sql`coalesce(po.reserved_until, po.booked_until) < ${ts(cutoff)}`);
  if (f.status) where.push(sql`po.status = ${f.status}`);
  if (f.tenantId) where.push(sql`po.tenant_id = ${f.tenantId}`);
  if (f.projectId) where.push(sql`po.project_id = ${f.projectId}`);
  if (f.number) where.push(sql`po.number LIKE ${f.number.replace(/[\\%_]/g, (c) => `\\${c}`) + '%'}`);
  if (f.crmActive === 'yes') where.push(sql`ab.id IS NOT NULL`);
  if (f.crmActive === 'no') where.push(sql`ab.id IS NULL`);
  const dir = f.dir === 'asc' ? sql`ASC` : sql`DESC`;
  const timer = sql`coalesce(po.reserved_until, po.booked_until)`;
  // "overdue by" grows as the timer gets older: sorting by overdue desc = timer asc
  const order: Record<StuckHoldSort, SQL> = {
    overdue: f.dir === 'asc' ? sql`${timer} DESC` : sql`${timer} ASC`,
    timer: sql`${timer} ${dir}`,
    number: sql`po.number ${dir}`,
    project: sql`p.name ${dir}`,
    tenant: sql`t.name ${dir}`,
    status: sql`po.status ${dir}`,
  };
  const rows = await db.execute<Record<string, unknown>>(sql`
    SELECT po.id, po.number, po.tenant_id, t.name AS tenant_name, po.project_id, p.name AS project_name, po.building_id, b.name AS building_name,
           po.status, ${timer} AS timer, po.hold_deal_id, po.hold_booking_id, po.status_changed_at,
           ab.id AS ab_id, ab.status AS ab_status, ab.deal_id AS ab_deal_id,
           hb.id AS hb_id, hb.status AS hb_status
    FROM chessboard.v_property_objects po
    JOIN chessboard.v_projects p ON p.id = po.project_id
    JOIN chessboard.v_buildings b ON b.id = po.building_id
    LEFT JOIN auth.v_tenants t ON t.id = po.tenant_id
    LEFT JOIN crm.v_bookings ab ON ab.property_object_id = po.id AND ab.status IN ('Reserved', 'AwaitingPayment', 'Booked')
    LEFT JOIN LATERAL (
      SELECT x.id, x.status FROM crm.v_bookings x
      WHERE x.property_object_id = po.id AND x.deal_id = po.hold_deal_id
      ORDER BY (x.id = po.hold_booking_id) DESC, x.created_at DESC LIMIT 1
    ) hb ON TRUE
    WHERE ${sql.join(where, sql` AND `)}
    ORDER BY ${order[f.sort ?? 'overdue']}, po.id
    LIMIT ${Math.min(f.limit ?? 500, 2000)}`);
  return rows.map((r) => {
    const timerAt = toDate(r.timer)!;
    return {
      propertyObjectId: String(r.id),
      number: String(r.number),
      tenantId: String(r.tenant_id),
      tenantName: (r.tenant_name as string | null) ?? null,
      projectId: String(r.project_id),
      projectName: String(r.project_name),
      buildingId: String(r.building_id),
      buildingName: String(r.building_name),
      status: r.status as 'Reserved' | 'Booked',
      timer: timerAt,
      overdueByMs: input.now.getTime() - timerAt.getTime(),
      pastGrace: timerAt.getTime() < cutoff.getTime(),
      holdDealId: (r.hold_deal_id as string | null) ?? null,
      holdBookingId: (r.hold_booking_id as string | null) ?? null,
      statusChangedAt: toDate(r.status_changed_at)!,
      crmActiveBooking: r.ab_id
        ? { id: String(r.ab_id), status: String(r.ab_status), dealId: String(r.ab_deal_id), holdsThisDeal: r.ab_deal_id === r.hold_deal_id }
        : null,
      holdBooking: r.hb_id ? { id: String(r.hb_id), status: String(r.hb_status) } : null,
    };
  });
}

/* ---------------------------------------------------------------------------------------------
 * Lost releases: each release by the safety net (status_source ExpirationJob) is a CRM release that
 * never arrived. chessboard.hold_releases holds the fields of its WARN log; manual releases too.
 * ------------------------------------------------------------------------------------------- */

const HOUR = 3600_000;
const DAY = 24 * HOUR;

export interface LostReleaseCounts {
  lastHour: number;
  lastDay: number;
  lastWeek: number;
}

export async function getLostReleaseCounts(db: DbOrTx, input: { now: Date; scope: TenantScope }): Promise<LostReleaseCounts> {
  const at = (ms: number) => ts(new Date(input.now.getTime() - ms));
  const [r] = await db.execute<{ h: number; d: number; w: number }>(sql`
    SELECT count(*) FILTER (WHERE released_at > ${at(HOUR)})::int AS h,
           count(*) FILTER (WHERE released_at > ${at(DAY)})::int AS d,
           count(*)::int AS w
    FROM chessboard.v_hold_releases
    WHERE status_source = 'ExpirationJob' AND released_at > ${at(7 * DAY)} AND released_at <= ${ts(input.now)}
      AND ${tenantFilter(sql`tenant_id`, input.scope)}`);
  return { lastHour: num(r.h), lastDay: num(r.d), lastWeek: num(r.w) };
}

export type ReleaseSource = 'ExpirationJob' | 'Manual' | 'all';

export interface HoldReleaseRow {
  id: number;
  releasedAt: Date;
  statusSource: string;
  propertyObjectId: string;
  number: string | null;
  tenantId: string;
  tenantName: string | null;
  projectId: string;
  projectName: string | null;
  /** null when the object no longer exists in chessboard */
  buildingId: string | null;
  holdDealId: string | null;
  fromStatus: string;
  expiredTimerAt: Date | null;
  overdueByMs: number | null;
  runId: string | null;
  actorId: string | null;
  reason: string | null;
  messageId: string;
  /** the crm booking of the released hold (object + hold deal, the newest created before the release) */
  bookingId: string | null;
}

export async function listHoldReleases(
  db: DbOrTx,
  input: { now: Date; scope: TenantScope; source?: ReleaseSource; sinceMs?: number; limit?: number },
): Promise<HoldReleaseRow[]> {
  const source = input.source ?? 'ExpirationJob';
  const since = new Date(input.now.getTime() - (input.sinceMs ?? 7 * DAY));
  const rows = await db.execute<Record<string, unknown>>(sql`
    SELECT hr.id, hr.released_at, hr.status_source, hr.property_object_id, po.number, po.building_id, hr.tenant_id, t.name AS tenant_name,
           hr.project_id, p.name AS project_name, hr.hold_deal_id, hr.from_status, hr.expired_timer_at, hr.overdue_by_ms,
           hr.run_id, hr.actor_id, hr.reason, hr.message_id,
           (SELECT b.id FROM crm.v_bookings b
             WHERE b.property_object_id = hr.property_object_id AND b.deal_id = hr.hold_deal_id AND b.created_at <= hr.released_at
             ORDER BY b.created_at DESC LIMIT 1) AS booking_id
    FROM chessboard.v_hold_releases hr
    LEFT JOIN chessboard.v_property_objects po ON po.id = hr.property_object_id
    LEFT JOIN chessboard.v_projects p ON p.id = hr.project_id
    LEFT JOIN auth.v_tenants t ON t.id = hr.tenant_id
    WHERE hr.released_at >= ${ts(since)} AND hr.released_at <= ${ts(input.now)}
      AND ${source === 'all' ? sql`TRUE` : sql`hr.status_source = ${source}`}
      AND ${tenantFilter(sql`hr.tenant_id`, input.scope)}
    ORDER BY hr.released_at DESC, hr.id DESC
    LIMIT ${Math.min(input.limit ?? 500, 2000)}`);
  return rows.map((r) => ({
    id: num(r.id),
    releasedAt: toDate(r.released_at)!,
    statusSource: String(r.status_source),
    propertyObjectId: String(r.property_object_id),
    number: (r.number as string | null) ?? null,
    tenantId: String(r.tenant_id),
    tenantName: (r.tenant_name as string | null) ?? null,
    projectId: String(r.project_id),
    projectName: (r.project_name as string | null) ?? null,
    buildingId: (r.building_id as string | null) ?? null,
    holdDealId: (r.hold_deal_id as string | null) ?? null,
    fromStatus: String(r.from_status),
    expiredTimerAt: toDate(r.expired_timer_at),
    overdueByMs: r.overdue_by_ms === null ? null : num(r.overdue_by_ms),
    runId: (r.run_id as string | null) ?? null,
    actorId: (r.actor_id as string | null) ?? null,
    reason: (r.reason as string | null) ?? null,
    messageId: String(r.message_id),
    bookingId: (r.booking_id as string | null) ?? null,
  }));
}

export interface ReleaseBucket {
  at: Date;
  expirationJob: number;
  manual: number;
}

/** Releases per hour (range ≤ 2 days) or per day, every bucket present (zeros included), oldest first. */
export async function holdReleaseHistogram(db: DbOrTx, input: { now: Date; scope: TenantScope; rangeMs: number }): Promise<ReleaseBucket[]> {
  const unit = input.rangeMs <= 2 * DAY ? 'hour' : 'day';
  const step = unit === 'hour' ? HOUR : DAY;
  const since = new Date(input.now.getTime() - input.rangeMs);
  const rows = await db.execute<{ bucket: string; source: string; n: number }>(sql`
    SELECT date_trunc(${unit}, released_at AT TIME ZONE 'UTC') AS bucket, status_source AS source, count(*)::int AS n
    FROM chessboard.v_hold_releases
    WHERE released_at >= ${ts(since)} AND released_at <= ${ts(input.now)} AND ${tenantFilter(sql`tenant_id`, input.scope)}
    GROUP BY 1, 2`);
  const key = (d: Date) => Math.floor(d.getTime() / step) * step;
  const buckets = new Map<number, ReleaseBucket>();
  for (let t = key(since); t <= key(input.now); t += step) buckets.set(t, { at: new Date(t), expirationJob: 0, manual: 0 });
  for (const r of rows) {
    // date_trunc of a UTC wall time comes back without zone: read it as UTC
    const at = new Date(`${String(r.bucket).replace(' ', 'T').slice(0, 19)}Z`);
    const b = buckets.get(key(at));
    if (!b) continue;
    if (r.source === 'ExpirationJob') b.expirationJob += num(r.n);
    else if (r.source === 'Manual') b.manual += num(r.n);
  }
  return [...buckets.values()];
}

/* ------------------------------------------------------------------------------------------- */

export interface HoldMismatchCounts {
  lastHour: number;
  lastDay: number;
  unresolved: number;
}

/** INV-CHS-003 refusals seen by the chessboard consumer (each also went to its DLQ). */
export async function getHoldMismatchCounts(db: DbOrTx, input: { now: Date; scope: TenantScope }): Promise<HoldMismatchCounts> {
  const at = (ms: number) => ts(new Date(input.now.getTime() - ms));
  const [r] = await db.execute<{ h: number; d: number; u: number }>(sql`
    SELECT count(*) FILTER (WHERE observed_at > ${at(HOUR)} AND observed_at <= ${ts(input.now)})::int AS h,
           count(*) FILTER (WHERE observed_at > ${at(DAY)} AND observed_at <= ${ts(input.now)})::int AS d,
           count(*) FILTER (WHERE resolved_at IS NULL)::int AS u
    FROM chessboard.v_hold_mismatches WHERE ${tenantFilter(sql`tenant_id`, input.scope)}`);
  return { lastHour: num(r.h), lastDay: num(r.d), unresolved: num(r.u) };
}
