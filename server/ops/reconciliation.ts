import { sql } from 'drizzle-orm';
import type { Actor } from '../auth/actor';
import { correlationIdOf } from '../platform/correlation-id';
import { republishBookingEvent as republishCrmBookingEvent } from '../crm/commands/republish-booking-event';
import { uuidArray, type DbOrTx, type Tx } from '../platform/db';
import { AppError } from '../platform/errors';
import { gauge } from '../platform/metrics';
import { recordAudit } from '../platform/audit';
import type { TenantScope } from './dashboard/sql';
import { RECONCILIATION_FINDING_KINDS } from './schema';

/**
 * Reconciliation crm ↔ chessboard (crm-booking-saga "Timeout и Reconciliation", "Manual review"):
 * compares the saga's source of truth (crm.bookings) with the chessboard's holds and lists what
 * disagrees, with the likely cause and the repair that applies. A read-only ops view across schemas;
 * the repairs go through the owners' commands (crm's republish, the chessboard's manual release).
 *
 *   booking_not_held      an active crm booking whose object is not held by its deal (and booking)
 *   hold_without_booking  a held object whose hold deal has no active crm booking for it
 *   timer_mismatch        held by the right deal, but the status or the timer differs from crm's
 *
 * Rows younger than the settle window are left out: the saga is eventually consistent (SLA < 1 min),
 * so a booking changed seconds ago may legitimately not be applied yet — except a divergence an
 * operator chose (manual release keeping the crm booking): nothing is in flight, it is listed at once.
 *
 * The page and the overview do not run this comparison: they read the findings the job keeps from it
 * (reconciliation-findings.ts), because comparing every active booking reads the whole object table.
 */

export const MISMATCH_KINDS = RECONCILIATION_FINDING_KINDS;

/** The audit action of a manual release that kept the crm booking on purpose (booking-repairs.ts records it). */
export const DIVERGENCE_AUDIT_ACTION = 'ops.release.divergence';
export type MismatchKind = (typeof MISMATCH_KINDS)[number];

/**
 * lost event: nothing explains it but a message that never arrived; the others are visible causes.
 * deliberate_divergence: an operator released the hold and chose to keep the crm booking (audited);
 * released_in_chessboard: chessboard released this booking's hold (its tombstone stops the booking's
 * events, or — the hold-expiration job — it had already applied the booking's current version, so a
 * republish is a stale no-op) — both are repaired by re-hold or by cancelling the booking.
 * object_unavailable: crm booked an object the chessboard can never hold for it — Hidden, Sold or
 * deleted (crm's view, crm.property_objects, was behind chessboard: DESIGN decision 8); chessboard
 * refused the booking-created (DLQ), republishing would be refused again: the repair cancels the booking.
 */
export type MismatchCause = 'dlq' | 'outbox_pending' | 'consumer_lag' | 'lost_event' | 'deliberate_divergence' | 'released_in_chessboard' | 'object_unavailable';
export type RepairAction = 'republish' | 'manual_release' | 'rehold' | 'cancel_booking';

export const RECONCILIATION_DEFAULTS = {
  /** timers equal within this tolerance are the same (ms precision, clock rounding) */
  timerToleranceMs: 1_000,
  /** leave out rows changed within this window (events in flight; saga SLA < 1 min) */
  settleMs: 2 * 60_000,
} as const;

export const reconciliationMismatchesGauge = gauge(
  'pin_reconciliation_mismatches',
  'crm ↔ chessboard mismatches found by the last reconciliation, by kind',
  ['kind'],
);

export interface ReconciliationRow {
  kind: MismatchKind;
  propertyObjectId: string;
  objectNumber: string | null;
  projectId: string | null;
  buildingId: string | null;
  projectName: string | null;
  tenantId: string;
  tenantName: string | null;
  /** chessboard side (null status: the object does not exist in chessboard) */
  objectStatus: string | null;
  objectTimer: Date | null;
  holdDealId: string | null;
  holdBookingId: string | null;
  /** crm side: the active booking, or for a hold without one the hold deal's newest booking of the object */
  bookingId: string | null;
  bookingStatus: string | null;
  bookingDealId: string | null;
  bookingVersion: number | null;
  bookingTimer: Date | null;
  /** chessboard timer − crm timer, for timer_mismatch */
  timerDiffMs: number | null;
  cause: MismatchCause;
  repairs: RepairAction[];
}

export interface ReconciliationReport {
  asOf: Date;
  toleranceMs: number;
  settleMs: number;
  rows: ReconciliationRow[];
  counts: Record<MismatchKind, number>;
  total: number;
}

const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`;
const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(String(v)));
const ACTIVE = sql`('Reserved', 'AwaitingPayment', 'Booked')`;

export interface ReconciliationInput {
  now: Date;
  scope: TenantScope;
  toleranceMs?: number;
  settleMs?: number;
  /** messages waiting for the chessboard consumer (Kafka lag), if known */
  consumerLag?: number | null;
}

/** Which rows a comparison looks at: every active booking and held object, or only these and what they touch. */
export type ComparisonSubjects = 'all' | {
  /** bookings compared whatever their object */
  bookingIds: readonly string[];
  /** objects compared as holds, and every active booking of them */
  objectIds: readonly string[];
};

export interface Comparison {
  /** the mismatches of settled rows, with causes and repairs */
  rows: ReconciliationRow[];
  /** active bookings compared: a booking-kind finding of one of them that is not in `rows` either agrees or is unsettled */
  comparedBookings: Set<string>;
  /** objects compared as holds: the given ones; with `all`, the held objects without an active booking of their deal */
  comparedObjects: Set<string>;
  /** compared but changed within the settle window (or repaired just now): not judged yet */
  unsettledBookings: Set<string>;
  unsettledObjects: Set<string>;
}

/**
 * Every active crm booking against its object, and every held object against crm's active bookings — or only
 * those of the given subjects (the reconciliation job's changed rows and open findings, a repair's booking and
 * object). Rows changed within the settle window are compared but not judged: they come back as unsettled.
 */
export async function compareCrmWithChessboard(
  db: DbOrTx,
  input: ReconciliationInput & {
    subjects: ComparisonSubjects;
    /** pending findings (a repair, or a change a cycle saw settling), by booking / object id: judged only once the settle window has passed that time */
    pendingSince?: ReadonlyMap<string, Date>;
  },
): Promise<Comparison> {
  const toleranceMs = input.toleranceMs ?? RECONCILIATION_DEFAULTS.timerToleranceMs;
  const settleMs = input.settleMs ?? RECONCILIATION_DEFAULTS.settleMs;
  const settled = new Date(input.now.getTime() - settleMs);
  const scopeOf = (col: string) => (input.scope === null ? sql`TRUE` : sql`${sql.raw(col)} = ${input.scope}`);
  const subjects = input.subjects;
  const out: Comparison = { rows: [], comparedBookings: new Set(), comparedObjects: new Set(), unsettledBookings: new Set(), unsettledObjects: new Set() };
  if (subjects !== 'all' && subjects.bookingIds.length === 0 && subjects.objectIds.length === 0) return out;
  const pendingSince = input.pendingSince;
  const repairedJustNow = (...ids: (string | null)[]) => ids.some((id) => id !== null && (pendingSince?.get(id)?.getTime() ?? -Infinity) >= settled.getTime());
  const onlyBookings = subjects === 'all' ? sql`TRUE`
    : sql`(b.id = ANY(${uuidArray(subjects.bookingIds)}) OR b.property_object_id = ANY(${uuidArray(subjects.objectIds)}))`;
  const onlyObjects = subjects === 'all' ? sql`TRUE` : sql`po.id = ANY(${uuidArray(subjects.objectIds)})`;

  // 1. every active crm booking against its object
  const active = await db.execute<Record<string, unknown>>(sql`
    SELECT b.id, b.tenant_id, b.deal_id, b.property_object_id, b.status, b.version, b.reserve_expires_at, b.booking_expires_at,
           po.id AS po_id, po.number, po.project_id, po.building_id, po.status AS po_status, coalesce(po.reserved_until, po.booked_until) AS po_timer,
           po.hold_deal_id, po.hold_booking_id, p.name AS project_name, t.name AS tenant_name,
           (b.updated_at < ${ts(settled)} AND (po.id IS NULL OR po.updated_at < ${ts(settled)})) AS settled,
           chosen.target_id IS NOT NULL AS chosen
    FROM crm.v_bookings b
    LEFT JOIN chessboard.v_property_objects po ON po.id = b.property_object_id
    LEFT JOIN chessboard.v_projects p ON p.id = po.project_id
    LEFT JOIN auth.v_tenants t ON t.id = b.tenant_id
    -- a divergence an operator chose is not an event in flight: it is judged at once (a join with the few
    -- chosen ones, not a subquery per booking)
    LEFT JOIN (SELECT DISTINCT a.target_id FROM ops.audit_log a WHERE a.action = ${DIVERGENCE_AUDIT_ACTION}) chosen ON chosen.target_id = b.id::text
    WHERE b.status IN ${ACTIVE} AND ${onlyBookings}
      AND ${scopeOf('b.tenant_id')}`);

  const rows: ReconciliationRow[] = [];
  for (const r of active) {
    const bookingId = String(r.id);
    out.comparedBookings.add(bookingId);
    if (!r.chosen && (!r.settled || repairedJustNow(bookingId, String(r.property_object_id)))) {
      out.unsettledBookings.add(bookingId);
      continue;
    }
    const bookingStatus = String(r.status);
    const expectedStatus = bookingStatus === 'Booked' ? 'Booked' : 'Reserved';
    const crmTimer = toDate(bookingStatus === 'Booked' ? r.booking_expires_at : r.reserve_expires_at);
    const poStatus = (r.po_status as string | null) ?? null;
    const held = poStatus === 'Reserved' || poStatus === 'Booked';
    const heldByThis = held && r.hold_deal_id === r.deal_id && (r.hold_booking_id === null || r.hold_booking_id === r.id);
    const poTimer = toDate(r.po_timer);
    const base = {
      propertyObjectId: String(r.property_object_id),
      objectNumber: (r.number as string | null) ?? null,
      projectId: (r.project_id as string | null) ?? null,
      buildingId: (r.building_id as string | null) ?? null,
      projectName: (r.project_name as string | null) ?? null,
      tenantId: String(r.tenant_id),
      tenantName: (r.tenant_name as string | null) ?? null,
      objectStatus: poStatus,
      objectTimer: poTimer,
      holdDealId: (r.hold_deal_id as string | null) ?? null,
      holdBookingId: (r.hold_booking_id as string | null) ?? null,
      bookingId,
      bookingStatus,
      bookingDealId: String(r.deal_id),
      bookingVersion: Number(r.version),
      bookingTimer: crmTimer,
    };
    if (!heldByThis) {
      rows.push({ ...base, kind: 'booking_not_held', timerDiffMs: null, cause: 'lost_event', repairs: held ? ['republish', 'manual_release'] : ['republish'] });
      continue;
    }
    const diff = poTimer && crmTimer ? poTimer.getTime() - crmTimer.getTime() : null;
    if (poStatus !== expectedStatus || diff === null || Math.abs(diff) > toleranceMs) {
      rows.push({ ...base, kind: 'timer_mismatch', timerDiffMs: poStatus === expectedStatus ? diff : null, cause: 'lost_event', repairs: ['republish'] });
    }
  }

  // 2. every held object whose hold deal has no active booking of it in crm
  const orphans = await db.execute<Record<string, unknown>>(sql`
    SELECT po.id, po.tenant_id, po.number, po.project_id, po.building_id, po.status, coalesce(po.reserved_until, po.booked_until) AS po_timer, po.hold_deal_id,
           po.hold_booking_id, p.name AS project_name, t.name AS tenant_name,
           lb.id AS b_id, lb.status AS b_status, lb.deal_id AS b_deal, lb.version AS b_version,
           coalesce(lb.booking_expires_at, lb.reserve_expires_at) AS b_timer,
           (po.updated_at < ${ts(settled)} AND (lb.id IS NULL OR lb.updated_at < ${ts(settled)})) AS settled
    FROM chessboard.v_property_objects po
    JOIN chessboard.v_projects p ON p.id = po.project_id
    LEFT JOIN auth.v_tenants t ON t.id = po.tenant_id
    LEFT JOIN LATERAL (
      SELECT x.* FROM crm.v_bookings x WHERE x.property_object_id = po.id AND x.deal_id = po.hold_deal_id
      ORDER BY (x.id = po.hold_booking_id) DESC, x.created_at DESC LIMIT 1
    ) lb ON TRUE
    WHERE po.status IN ('Reserved', 'Booked') AND ${onlyObjects}
      AND NOT EXISTS (SELECT 1 FROM crm.v_bookings a WHERE a.property_object_id = po.id AND a.deal_id = po.hold_deal_id AND a.status IN ${ACTIVE})
      AND ${scopeOf('po.tenant_id')}`);
  if (subjects !== 'all') for (const id of subjects.objectIds) out.comparedObjects.add(id);
  for (const r of orphans) {
    const objectId = String(r.id);
    out.comparedObjects.add(objectId);
    if (!r.settled || repairedJustNow(objectId, (r.b_id as string | null) ?? null)) {
      out.unsettledObjects.add(objectId);
      continue;
    }
    rows.push({
      kind: 'hold_without_booking',
      propertyObjectId: objectId,
      objectNumber: (r.number as string | null) ?? null,
      projectId: String(r.project_id),
      buildingId: String(r.building_id),
      projectName: (r.project_name as string | null) ?? null,
      tenantId: String(r.tenant_id),
      tenantName: (r.tenant_name as string | null) ?? null,
      objectStatus: String(r.status),
      objectTimer: toDate(r.po_timer),
      holdDealId: (r.hold_deal_id as string | null) ?? null,
      holdBookingId: (r.hold_booking_id as string | null) ?? null,
      bookingId: (r.b_id as string | null) ?? null,
      bookingStatus: (r.b_status as string | null) ?? null,
      bookingDealId: (r.b_deal as string | null) ?? null,
      bookingVersion: r.b_version === null ? null : Number(r.b_version),
      bookingTimer: toDate(r.b_timer),
      timerDiffMs: null,
      cause: 'lost_event',
      repairs: r.b_id ? ['republish', 'manual_release'] : ['manual_release'],
    });
  }

  await explainCauses(db, rows, input.consumerLag ?? null);
  await markDivergences(db, rows);
  markUnavailableObjects(rows);
  sortRows(rows);
  out.rows = rows;
  return out;
}

/** The page's order: by kind, then object number. */
export function sortRows(rows: ReconciliationRow[]): void {
  rows.sort((a, b) => MISMATCH_KINDS.indexOf(a.kind) - MISMATCH_KINDS.indexOf(b.kind) || (a.objectNumber ?? '').localeCompare(b.objectNumber ?? ''));
}

export function countByKind(rows: readonly { kind: MismatchKind }[]): Record<MismatchKind, number> {
  return Object.fromEntries(MISMATCH_KINDS.map((k) => [k, rows.filter((r) => r.kind === k).length])) as Record<MismatchKind, number>;
}

/**
 * The whole comparison, now: every active booking and every held object, settled rows only. The reconciliation
 * job's full cycle and the reference its maintained findings are checked against; the page and the overview read
 * the findings (reconciliation-findings.ts), not this.
 */
export async function runReconciliation(db: DbOrTx, input: ReconciliationInput): Promise<ReconciliationReport> {
  const toleranceMs = input.toleranceMs ?? RECONCILIATION_DEFAULTS.timerToleranceMs;
  const settleMs = input.settleMs ?? RECONCILIATION_DEFAULTS.settleMs;
  const { rows } = await compareCrmWithChessboard(db, { ...input, toleranceMs, settleMs, subjects: 'all' });
  return { asOf: input.now, toleranceMs, settleMs, rows, counts: countByKind(rows), total: rows.length };
}

/**
 * The likely cause of each row, most specific first: a message of its booking (or a hold mismatch of
 * its object) waits in a DLQ; the booking's event is still in the crm outbox (relay backlog); the
 * chessboard consumer is behind; otherwise the event was lost.
 */
async function explainCauses(db: DbOrTx, rows: ReconciliationRow[], consumerLag: number | null): Promise<void> {
  if (rows.length === 0) return;
  const ids = [...new Set(rows.flatMap((r) => [r.bookingId, r.bookingDealId, r.holdDealId].filter((x): x is string => !!x)))];
  const objects = [...new Set(rows.map((r) => r.propertyObjectId))];
  const list = (xs: string[]) => sql.join(xs.map((x) => sql`${x}`), sql`, `);
  const dlq = ids.length === 0 ? [] : await db.execute<{ aggregate_id: string }>(sql`
    SELECT DISTINCT aggregate_id FROM ops.dlq_messages WHERE decision IS NULL AND aggregate_id IN (${list(ids)})`);
  const mismatched = await db.execute<{ property_object_id: string }>(sql`
    SELECT DISTINCT property_object_id FROM chessboard.v_hold_mismatches WHERE resolved_at IS NULL AND property_object_id::text IN (${list(objects)})`);
  const pending = ids.length === 0 ? [] : await db.execute<{ aggregate_id: string }>(sql`
    SELECT DISTINCT aggregate_id::text AS aggregate_id FROM crm.outbox WHERE published_at IS NULL AND aggregate_id::text IN (${list(ids)})`);
  const inDlq = new Set([...dlq.map((r) => r.aggregate_id), ...mismatched.map((r) => String(r.property_object_id))]);
  const inOutbox = new Set(pending.map((r) => r.aggregate_id));
  for (const r of rows) {
    const keys = [r.bookingId, r.bookingDealId, r.holdDealId, r.propertyObjectId].filter((x): x is string => !!x);
    if (keys.some((k) => inDlq.has(k))) r.cause = 'dlq';
    else if (keys.some((k) => inOutbox.has(k))) r.cause = 'outbox_pending';
    else if (consumerLag !== null && consumerLag > 0) r.cause = 'consumer_lag';
    else r.cause = 'lost_event';
  }
}

/**
 * An active booking whose hold chessboard released on purpose (manual release: the booking is
 * tombstoned in chessboard.crm_booking_versions) is not a lost event: republishing its state is a no-op
 * by design. Its repairs are re-hold (object Free) or cancel the crm booking; the cause says whether an
 * operator chose the divergence (audit ops.release.divergence) or it came from an unchecked release.
 */
async function markDivergences(db: DbOrTx, rows: ReconciliationRow[]): Promise<void> {
  const candidates = rows.filter((r) => r.kind === 'booking_not_held' && r.bookingId);
  if (candidates.length === 0) return;
  const list = sql.join(candidates.map((r) => sql`${r.bookingId}`), sql`, `);
  // tombstoned, or already applied at the booking's current version: the hold-expiration job (or another
  // chessboard release) freed it after chessboard applied the booking's last event, so a republish of that
  // event is a stale no-op and only re-hold or cancel can make the finding disappear
  const released = await db.execute<{ booking_id: string; deliberate: boolean }>(sql`
    SELECT v.booking_id::text AS booking_id,
           EXISTS (SELECT 1 FROM ops.audit_log a WHERE a.action = ${DIVERGENCE_AUDIT_ACTION} AND a.target_id = v.booking_id::text) AS deliberate
      FROM chessboard.v_crm_booking_versions v
      JOIN crm.v_bookings b ON b.id = v.booking_id
     WHERE (v.released OR v.applied_version >= b.version) AND v.booking_id::text IN (${list})`);
  const byBooking = new Map(released.map((r) => [r.booking_id, r.deliberate]));
  for (const r of candidates) {
    const deliberate = byBooking.get(r.bookingId!);
    if (deliberate === undefined) continue;
    r.cause = deliberate ? 'deliberate_divergence' : 'released_in_chessboard';
    r.repairs = r.objectStatus === 'Free' ? ['rehold', 'cancel_booking'] : ['cancel_booking'];
  }
}

export function setReconciliationGauge(counts: Record<MismatchKind, number>): void {
  for (const kind of MISMATCH_KINDS) reconciliationMismatchesGauge.set({ kind }, counts[kind]);
}

/* ---------------------------------------------------------------------------------------------
 * Repairs
 * ------------------------------------------------------------------------------------------- */

export const RECONCILIATION_ERRORS = {
  BOOKING_NOT_FOUND: 'OPS_RECONCILIATION_BOOKING_NOT_FOUND',
} as const;


export interface RepublishResult {
  bookingId: string;
  propertyObjectId: string;
  topic: string;
  messageId: string;
  bookingVersion: number;
}

/**
 * Repair "re-publish the booking's last event": crm's republish command writes a crm.outbox row repeating
 * the booking's current-state event with the same bookingVersion (the relay publishes it; consumers dedupe
 * by version); ops checks the scope's answer and audits the repair.
 */
export async function republishBookingEvent(
  tx: Tx,
  input: { bookingId: string; actor: Actor; reason: string; correlationId?: string; now?: Date },
): Promise<RepublishResult> {
  const now = input.now ?? new Date();
  const correlationId = correlationIdOf(input.correlationId);
  // crm writes its own outbox: its republish command repeats the booking's current state
  const republished = await republishCrmBookingEvent(tx, { bookingId: input.bookingId, actor: input.actor, correlationId, now });
  if (!republished) {
    throw new AppError(RECONCILIATION_ERRORS.BOOKING_NOT_FOUND, 'NOT_FOUND', 'booking not found', { bookingId: input.bookingId });
  }
  const { booking: b, topic, messageId } = republished;
  await recordAudit(tx, {
    at: now, actor: input.actor, action: 'ops.reconciliation.republish', targetType: 'Booking', targetId: b.id, reason: input.reason,
    details: { topic, messageId, bookingVersion: b.version, bookingStatus: b.status, propertyObjectId: b.propertyObjectId, correlationId },
  });
  return { bookingId: b.id, propertyObjectId: b.propertyObjectId, topic, messageId, bookingVersion: b.version };
}

/**
 * An active booking of an object that is Hidden, Sold or gone in the chessboard: booked while crm's
 * projection lagged (docs/decisions/0014-projection-lag.md). Whatever the delivery, the chessboard refuses
 * it (NOT_AVAILABLE / NOT_FOUND), so the only repair that makes the finding disappear is cancelling it.
 */
function markUnavailableObjects(rows: ReconciliationRow[]): void {
  for (const r of rows) {
    if (r.kind !== 'booking_not_held' || !(r.objectStatus === null || r.objectStatus === 'Hidden' || r.objectStatus === 'Sold')) continue;
    r.cause = 'object_unavailable';
    r.repairs = ['cancel_booking'];
  }
}
