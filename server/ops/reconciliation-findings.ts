import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { propertyObjectsChangedSince } from '../chessboard/queries';
import { bookingsChangedSince } from '../crm/queries';
import { uuidArray, type DbOrTx, type Tx } from '../platform/db';
import type { TenantScope } from './dashboard/sql';
import {
  compareCrmWithChessboard, countByKind, MISMATCH_KINDS, RECONCILIATION_DEFAULTS, sortRows,
  type Comparison, type MismatchKind, type ReconciliationRow,
} from './reconciliation';
import { reconciliationFindings, reconciliationState } from './schema';

/**
 * The reconciliation's maintained result. Comparing every active booking with its object reads the whole
 * object table (seconds at a million objects), so the page and the overview do not compare: they read
 * ops.reconciliation_findings, which the job `reconciliation` keeps and the repairs update in their own
 * transaction.
 *
 * A cycle (runReconciliationCycle) compares only what can have changed: the bookings and objects written since
 * its watermark (their updated_at, minus an overlap for clock skew between hosts and commits that land late),
 * and every finding it holds. It judges those pairs exactly as the full comparison does (same settle window,
 * same tolerance, same causes and repairs) and writes the difference: a new finding is inserted, one that
 * agrees now is deleted, one whose rows are still settling is kept but not listed (pending). The first cycle,
 * and one a day after that, compares everything — the safety net for a change that left no updated_at.
 *
 * A repair (recheckAfterRepair) marks the findings of its booking and object pending in its transaction: the row
 * leaves the page at once, like a row whose event is in flight, and the first cycle after the settle window judges
 * it again — gone if the repair worked, listed again if not. A divergence an operator chose is listed at once.
 */

export const RECONCILIATION_CYCLE = {
  /** changes are read from this long before the watermark again: a late commit or a skewed clock is not missed */
  overlapMs: 2 * 60_000,
  /** a full comparison at least this often (and on the first cycle) */
  fullEveryMs: 24 * 3600_000,
} as const;

const CAUSES = ['dlq', 'outbox_pending', 'consumer_lag', 'lost_event', 'deliberate_divergence', 'released_in_chessboard', 'object_unavailable'] as const;
const REPAIRS = ['republish', 'manual_release', 'rehold', 'cancel_booking'] as const;
const isoDate = z.iso.datetime({ offset: true }).nullable().transform((v) => (v === null ? null : new Date(v)));
const nullableText = z.string().nullable();

/** What a finding row keeps beside its key columns: both sides as they were judged (jsonb `details`). */
const findingDetails = z.object({
  projectId: nullableText,
  buildingId: nullableText,
  projectName: nullableText,
  tenantName: nullableText,
  objectStatus: nullableText,
  objectTimer: isoDate,
  holdDealId: nullableText,
  holdBookingId: nullableText,
  bookingStatus: nullableText,
  bookingDealId: nullableText,
  bookingVersion: z.number().int().nullable(),
  bookingTimer: isoDate,
  timerDiffMs: z.number().nullable(),
});

// ids come from uuid columns: any uuid the owners stored is read back (z.guid), whatever its version bits
const findingRow = z.object({
  kind: z.enum(MISMATCH_KINDS),
  propertyObjectId: z.guid(),
  bookingId: z.guid().nullable(),
  tenantId: z.guid(),
  objectNumber: nullableText,
  cause: z.enum(CAUSES),
  repairs: z.array(z.enum(REPAIRS)),
  details: findingDetails,
});

/** The reconciliation page's answer (the ops router's output schema). */
export const reconciliationPageOutput = z.object({
  asOf: z.date().nullable(),
  toleranceMs: z.number().int(),
  settleMs: z.number().int(),
  rows: z.array(z.object({
    kind: z.enum(MISMATCH_KINDS), propertyObjectId: z.guid(), objectNumber: nullableText, projectId: nullableText, buildingId: nullableText,
    projectName: nullableText, tenantId: z.guid(), tenantName: nullableText, objectStatus: nullableText, objectTimer: z.date().nullable(),
    holdDealId: nullableText, holdBookingId: nullableText, bookingId: z.guid().nullable(), bookingStatus: nullableText, bookingDealId: nullableText,
    bookingVersion: z.number().int().nullable(), bookingTimer: z.date().nullable(), timerDiffMs: z.number().nullable(),
    cause: z.enum(CAUSES), repairs: z.array(z.enum(REPAIRS)),
  })),
  counts: z.record(z.enum(MISMATCH_KINDS), z.number().int()),
  total: z.number().int(),
});

function toRow(f: typeof reconciliationFindings.$inferSelect): ReconciliationRow {
  const { details, ...key } = findingRow.parse(f);
  return { ...key, ...details };
}

function detailsOf(r: ReconciliationRow): Record<string, unknown> {
  const { kind: _k, propertyObjectId: _o, bookingId: _b, tenantId: _t, objectNumber: _n, cause: _c, repairs: _r, ...details } = r;
  return { ...details, objectTimer: details.objectTimer?.toISOString() ?? null, bookingTimer: details.bookingTimer?.toISOString() ?? null };
}

const subjectOf = (r: { kind: MismatchKind; propertyObjectId: string; bookingId: string | null }): string =>
  (r.kind === 'hold_without_booking' ? r.propertyObjectId : r.bookingId!);
const keyOf = (kind: string, subject: string) => `${kind}:${subject}`;

/* ---------------------------------------------------------------------------------------------
 * Reads: the page and the overview
 * ------------------------------------------------------------------------------------------- */

const scoped = (scope: TenantScope): SQL | undefined => (scope === null ? undefined : eq(reconciliationFindings.tenantId, scope));
const listed = (scope: TenantScope) => and(isNull(reconciliationFindings.pendingSince), scoped(scope));

/** the last cycle's time; before the first cycle, the last repair's re-check (null when neither has run) */
async function lastCheckedAt(db: DbOrTx): Promise<Date | null> {
  const [s] = await db.execute<{ at: string | Date | null }>(sql`
    SELECT coalesce((SELECT checked_at FROM ops.reconciliation_state WHERE id = 1),
                    (SELECT max(checked_at) FROM ops.reconciliation_findings)) AS at`);
  return s?.at ? new Date(s.at) : null;
}

export interface MaintainedReport {
  /** when the last cycle judged the findings; null before the first cycle */
  asOf: Date | null;
  toleranceMs: number;
  settleMs: number;
  rows: ReconciliationRow[];
  counts: Record<MismatchKind, number>;
  total: number;
}

/** The reconciliation page: the listed findings of the scope, in the page's order. */
export async function readFindings(db: DbOrTx, input: { scope: TenantScope }): Promise<MaintainedReport> {
  const [found, asOf] = await Promise.all([
    db.select().from(reconciliationFindings).where(listed(input.scope)),
    lastCheckedAt(db),
  ]);
  const rows = found.map(toRow);
  sortRows(rows);
  return {
    asOf, toleranceMs: RECONCILIATION_DEFAULTS.timerToleranceMs, settleMs: RECONCILIATION_DEFAULTS.settleMs,
    rows, counts: countByKind(rows), total: rows.length,
  };
}

/** The overview's tile: the same findings counted by kind; null before the first cycle has run. */
export async function findingCounts(db: DbOrTx, input: { scope: TenantScope }): Promise<{ at: Date; total: number; byKind: Record<MismatchKind, number> } | null> {
  const [counts, at] = await Promise.all([
    db.select({ kind: reconciliationFindings.kind, n: sql<number>`count(*)::int` }).from(reconciliationFindings)
      .where(listed(input.scope)).groupBy(reconciliationFindings.kind),
    lastCheckedAt(db),
  ]);
  if (at === null) return null;
  const byKind = Object.fromEntries(MISMATCH_KINDS.map((k) => [k, counts.find((c) => c.kind === k)?.n ?? 0])) as Record<MismatchKind, number>;
  return { at, total: Object.values(byKind).reduce((a, b) => a + b, 0), byKind };
}

/* ---------------------------------------------------------------------------------------------
 * Writes: the job's cycle and the repairs' re-check
 * ------------------------------------------------------------------------------------------- */

/** Takes the reconciliation's lock (its state row): cycles and repairs write the findings one at a time. */
async function lockState(tx: Tx) {
  await tx.insert(reconciliationState).values({ id: 1 }).onConflictDoNothing();
  const [state] = await tx.select().from(reconciliationState).where(eq(reconciliationState.id, 1)).for('update');
  return state!;
}

interface Subjects { bookingIds: Set<string>; objectIds: Set<string> }

/**
 * Writes what a comparison judged over the findings it covers: the booking-kind findings of the bookings it
 * compared (or was asked about) and of the objects it was asked about, the hold findings of those objects
 * (with `all`, every finding). Judged mismatched: upserted and listed; settling: kept, pending; else deleted.
 */
async function applyComparison(tx: Tx, input: { now: Date; by: string | null; comparison: Comparison; subjects: Subjects | 'all' }) {
  const { comparison: c, now } = input;
  const bookingIds = input.subjects === 'all' ? [] : [...new Set([...input.subjects.bookingIds, ...c.comparedBookings])];
  const objectIds = input.subjects === 'all' ? [] : [...input.subjects.objectIds];
  const f = reconciliationFindings;
  const existing = input.subjects === 'all'
    ? await tx.select({ kind: f.kind, subjectId: f.subjectId }).from(f)
    : await tx.select({ kind: f.kind, subjectId: f.subjectId }).from(f).where(sql`
        (${f.kind} <> 'hold_without_booking' AND (${f.subjectId} = ANY(${uuidArray(bookingIds)}) OR ${f.propertyObjectId} = ANY(${uuidArray(objectIds)})))
        OR (${f.kind} = 'hold_without_booking' AND ${f.subjectId} = ANY(${uuidArray(objectIds)}))`);

  const judged = new Map(c.rows.map((r) => [keyOf(r.kind, subjectOf(r)), r]));
  const pending = new Map<MismatchKind, string[]>();
  const gone = new Map<MismatchKind, string[]>();
  for (const e of existing) {
    if (judged.has(keyOf(e.kind, e.subjectId))) continue;
    const settling = e.kind === 'hold_without_booking' ? c.unsettledObjects.has(e.subjectId) : c.unsettledBookings.has(e.subjectId);
    const into = settling ? pending : gone;
    into.set(e.kind, [...(into.get(e.kind) ?? []), e.subjectId]);
  }
  for (const [kind, ids] of gone) await tx.delete(f).where(and(eq(f.kind, kind), sql`${f.subjectId} = ANY(${uuidArray(ids)})`));
  for (const [kind, ids] of pending) {
    await tx.update(f).set({ pendingSince: sql`coalesce(${f.pendingSince}, ${now.toISOString()}::timestamptz)` })
      .where(and(eq(f.kind, kind), sql`${f.subjectId} = ANY(${uuidArray(ids)})`));
  }
  const rows = [...judged.values()];
  for (let i = 0; i < rows.length; i += 500) {
    await tx.insert(f).values(rows.slice(i, i + 500).map((r) => ({
      kind: r.kind, subjectId: subjectOf(r), propertyObjectId: r.propertyObjectId, bookingId: r.bookingId, tenantId: r.tenantId,
      objectNumber: r.objectNumber, cause: r.cause, repairs: r.repairs, details: detailsOf(r),
      foundAt: now, checkedAt: now, checkedBy: input.by, pendingSince: null,
    }))).onConflictDoUpdate({
      target: [f.kind, f.subjectId],
      set: {
        propertyObjectId: sql`excluded.property_object_id`, bookingId: sql`excluded.booking_id`, tenantId: sql`excluded.tenant_id`,
        objectNumber: sql`excluded.object_number`, cause: sql`excluded.cause`, repairs: sql`excluded.repairs`, details: sql`excluded.details`,
        checkedAt: sql`excluded.checked_at`, checkedBy: sql`excluded.checked_by`, pendingSince: null,
      },
    });
  }
  return { inserted: rows.length, deleted: [...gone.values()].flat().length, pending: [...pending.values()].flat().length };
}

export interface CycleResult {
  mode: 'full' | 'incremental';
  /** the watermark this cycle read changes from (null: a full cycle) */
  changedSince: Date | null;
  comparedBookings: number;
  comparedObjects: number;
  /** the findings listed after the cycle (every tenant) */
  rows: ReconciliationRow[];
  counts: Record<MismatchKind, number>;
  total: number;
  pending: number;
}

/**
 * One cycle of the job, in one transaction with its findings and its watermark: compare what changed since the
 * last cycle and every finding held (or everything, the first time and once a day), write the difference.
 */
export async function runReconciliationCycle(
  tx: Tx,
  input: { now: Date; runId: string | null; consumerLag: number | null; toleranceMs?: number; settleMs?: number; full?: boolean },
): Promise<CycleResult> {
  const settleMs = input.settleMs ?? RECONCILIATION_DEFAULTS.settleMs;
  const settled = new Date(input.now.getTime() - settleMs);
  const state = await lockState(tx);
  const full = input.full === true || state.watermark === null || state.fullAt === null
    || input.now.getTime() - state.fullAt.getTime() >= RECONCILIATION_CYCLE.fullEveryMs;
  const base = { now: input.now, scope: null, consumerLag: input.consumerLag, toleranceMs: input.toleranceMs, settleMs };

  // a finding a repair (or a settling change) made pending is not judged before the settle window has passed
  const held = await tx.select({ bookingId: reconciliationFindings.bookingId, objectId: reconciliationFindings.propertyObjectId, kind: reconciliationFindings.kind, subjectId: reconciliationFindings.subjectId, pendingSince: reconciliationFindings.pendingSince })
    .from(reconciliationFindings);
  const pendingSince = new Map<string, Date>();
  for (const h of held) if (h.pendingSince) pendingSince.set(h.subjectId, h.pendingSince);
  let subjects: Subjects | 'all' = 'all';
  let changedSince: Date | null = null;
  let comparison: Comparison;
  if (full) {
    comparison = await compareCrmWithChessboard(tx, { ...base, subjects: 'all', pendingSince });
  } else {
    changedSince = new Date(state.watermark!.getTime() - RECONCILIATION_CYCLE.overlapMs);
    const [bookings, objects] = await Promise.all([bookingsChangedSince(tx, changedSince), propertyObjectsChangedSince(tx, changedSince)]);
    const s: Subjects = { bookingIds: new Set(), objectIds: new Set(objects) };
    for (const b of bookings) { s.bookingIds.add(b.id); s.objectIds.add(b.propertyObjectId); }
    for (const h of held) {
      if (h.kind !== 'hold_without_booking') s.bookingIds.add(h.subjectId);
      s.objectIds.add(h.objectId);
    }
    subjects = s;
    comparison = await compareCrmWithChessboard(tx, { ...base, subjects: { bookingIds: [...s.bookingIds], objectIds: [...s.objectIds] }, pendingSince });
  }
  await applyComparison(tx, { now: input.now, by: input.runId, comparison, subjects });
  const watermark = state.watermark && state.watermark > settled ? state.watermark : settled;
  await tx.update(reconciliationState)
    .set({ watermark, checkedAt: input.now, fullAt: full ? input.now : state.fullAt, runId: input.runId })
    .where(eq(reconciliationState.id, 1));

  const all = await tx.select().from(reconciliationFindings);
  const rows = all.filter((r) => r.pendingSince === null).map(toRow);
  sortRows(rows);
  return {
    mode: full ? 'full' : 'incremental', changedSince,
    comparedBookings: comparison.comparedBookings.size, comparedObjects: comparison.comparedObjects.size,
    rows, counts: countByKind(rows), total: rows.length, pending: all.length - rows.length,
  };
}

/**
 * In a repair's transaction, after the owners' commands: the findings of this booking and object leave the page
 * (pending, like a row whose event is in flight) and the first cycle past the settle window judges them again.
 * The pair is compared at once, so a divergence the operator has just chosen is listed at once.
 */
export async function recheckAfterRepair(
  tx: Tx,
  input: { now: Date; bookingIds: readonly string[]; objectIds: readonly string[]; correlationId?: string | null },
): Promise<void> {
  await lockState(tx);
  const f = reconciliationFindings;
  const bookingIds = [...new Set(input.bookingIds)];
  const objectIds = [...new Set(input.objectIds)];
  const marked = await tx.update(f).set({ pendingSince: input.now }).where(sql`
      ${f.bookingId} = ANY(${uuidArray(bookingIds)}) OR ${f.subjectId} = ANY(${uuidArray([...bookingIds, ...objectIds])})
      OR ${f.propertyObjectId} = ANY(${uuidArray(objectIds)})`)
    .returning({ subjectId: f.subjectId, bookingId: f.bookingId, objectId: f.propertyObjectId });
  const pendingSince = new Map<string, Date>();
  for (const id of [...bookingIds, ...objectIds, ...marked.flatMap((m) => [m.subjectId, m.objectId, ...(m.bookingId ? [m.bookingId] : [])])]) pendingSince.set(id, input.now);
  const subjects: Subjects = { bookingIds: new Set([...bookingIds, ...marked.flatMap((m) => (m.bookingId ? [m.bookingId] : []))]), objectIds: new Set([...objectIds, ...marked.map((m) => m.objectId)]) };
  const comparison = await compareCrmWithChessboard(tx, {
    now: input.now, scope: null, consumerLag: null, subjects: { bookingIds: [...subjects.bookingIds], objectIds: [...subjects.objectIds] }, pendingSince,
  });
  await applyComparison(tx, { now: input.now, by: input.correlationId ?? null, comparison, subjects });
}
