import { and, asc, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { holdReleases, propertyObjects } from './schema';
import { lockedColumns } from './property-object-persistence';

/**
 * The queries of the property-object-hold-expiration job. Each phase reads through its own partial
 * index: `status = X AND timer < cutoff` implies `timer IS NOT NULL`, the predicate of
 * ix_property_objects_reserved_until / ix_property_objects_booked_until, and the index order is the
 * ORDER BY (oldest hold first), so a batch reads ~BatchSize index entries however large the table is.
 */

export type HoldPhase = 'reserved' | 'booked';

export const PHASES: Record<HoldPhase, { status: 'Reserved' | 'Booked'; timer: typeof propertyObjects.reservedUntil | typeof propertyObjects.bookedUntil; timerName: 'ReservedUntil' | 'BookedUntil' }> = {
  reserved: { status: 'Reserved', timer: propertyObjects.reservedUntil, timerName: 'ReservedUntil' },
  booked: { status: 'Booked', timer: propertyObjects.bookedUntil, timerName: 'BookedUntil' },
};

/**
 * Expired holds of a phase: the timer alone. INV-CHS-002 (a CHECK) sets reserved_until exactly when
 * Reserved and booked_until exactly when Booked, so `timer < cutoff` selects the same rows as
 * `status = X AND timer < cutoff`. The status term is left out on purpose: the planner takes the two
 * as independent and estimates their product (1 % Reserved × the expired share → a handful of rows),
 * and with that estimate it preferred a BitmapAnd of the partial index and
 * ix_property_objects_project_status, fetching EVERY expired hold and sorting them, to the ordered
 * scan of `limit` index entries (bench hold-expiration @1M, 5,000 expired Reserved: 4,946 heap pages
 * read per batch — a cost that grew with the backlog, not with the batch).
 */
const expiredPredicate = (phase: HoldPhase, cutoff: Date) => lt(PHASES[phase].timer, cutoff);

/**
 * Candidates of one phase, oldest timer first, at most `limit`, locked until the transaction ends.
 * SKIP LOCKED: a row locked by another job instance or by the CRM consumer (a late release/book being
 * applied right now) is passed over without waiting — each object goes to exactly one instance.
 * The guard still checks each row's status (INV-CHS-001) before it is released.
 */
export function selectExpiredHoldsForUpdate(tx: DbOrTx, phase: HoldPhase, cutoff: Date, limit: number) {
  return tx
    .select(lockedColumns)
    .from(propertyObjects)
    .where(expiredPredicate(phase, cutoff))
    .orderBy(asc(PHASES[phase].timer), asc(propertyObjects.id))
    .limit(limit)
    .for('update', { skipLocked: true });
}

export type ExpiredHold = Awaited<ReturnType<typeof selectExpiredHoldsForUpdate>>[number];

/**
 * Expired holds of a phase, without locking. With `upTo` (the last row a full batch selected) only
 * those at or before it in the batch order are counted — the rows the locking scan walked over.
 */
export async function countExpiredHolds(tx: DbOrTx, phase: HoldPhase, cutoff: Date, upTo?: { timer: Date; id: string }): Promise<number> {
  const [row] = await expiredHoldsCountQuery(tx, phase, cutoff, upTo);
  return row?.n ?? 0;
}

/** The statement of `countExpiredHolds` (its plan is tested: an Index Only Scan of the phase's partial index). */
export function expiredHoldsCountQuery(tx: DbOrTx, phase: HoldPhase, cutoff: Date, upTo?: { timer: Date; id: string }) {
  const timer = PHASES[phase].timer;
  // The timer alone, not `status = X AND timer < cutoff`: INV-CHS-002 (a CHECK) sets reserved_until
  // exactly when Reserved and booked_until exactly when Booked, so the two predicates select the same
  // rows — and this one is answered from the (timer, id) partial index alone (Index Only Scan), without
  // visiting the heap rows for `status` (at 1M objects they sit on as many pages as there are holds).
  return tx
    .select({ n: sql<number>`count(*)::int` })
    .from(propertyObjects)
    .where(and(
      lt(timer, cutoff),
      upTo ? sql`(${timer}, ${propertyObjects.id}) <= (${upTo.timer.toISOString()}::timestamptz, ${upTo.id}::uuid)` : undefined,
    ));
}

/**
 * SkippedLockedCount of one batch. PostgreSQL keeps row locks in the tuples, not in pg_locks (only
 * waiters show up there), so "which candidates were locked" cannot be read directly. Instead: right
 * after the locking SELECT, in the same transaction, count the candidates the scan walked over without
 * locking. The scan passes rows in batch order until it has `limit` rows; every candidate ordered before
 * the last row it took (or every candidate, if it ran out before `limit`) that it did not take was
 * locked by someone else. Our own rows are still Reserved/Booked (nothing updated yet), hence the
 * subtraction. One cheap index-range count per phase.
 */
export async function countSkippedLocked(tx: DbOrTx, phase: HoldPhase, cutoff: Date, selected: ExpiredHold[], limit: number): Promise<number> {
  const last = selected[selected.length - 1];
  const timerOf = (o: ExpiredHold) => (phase === 'reserved' ? o.reservedUntil : o.bookedUntil)!;
  const walked = await countExpiredHolds(tx, phase, cutoff, selected.length >= limit && last ? { timer: timerOf(last), id: last.id } : undefined);
  return Math.max(0, walked - selected.length);
}

/** One hold_releases row (snake_case: it travels as jsonb). */
export interface HoldReleaseRow {
  property_object_id: string;
  tenant_id: string;
  project_id: string;
  hold_deal_id: string | null;
  from_status: string;
  expired_timer_at: string;
  overdue_by_ms: number;
  status_source: string;
  run_id: string;
  message_id: string;
  released_at: string;
}

/** The hold_releases rows of a batch in one INSERT (one jsonb parameter; rows keep their order). */
export async function insertHoldReleases(tx: DbOrTx, rows: HoldReleaseRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.execute(sql`
    INSERT INTO ${holdReleases} (property_object_id, tenant_id, project_id, hold_deal_id, from_status, expired_timer_at, overdue_by_ms,
      status_source, run_id, message_id, released_at)
    SELECT r.property_object_id, r.tenant_id, r.project_id, r.hold_deal_id, r.from_status, r.expired_timer_at, r.overdue_by_ms,
      r.status_source, r.run_id, r.message_id, r.released_at
    FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS (property_object_id uuid, tenant_id uuid, project_id uuid,
      hold_deal_id uuid, from_status text, expired_timer_at timestamptz, overdue_by_ms bigint, status_source text, run_id uuid,
      message_id uuid, released_at timestamptz)) WITH ORDINALITY
      AS r(property_object_id, tenant_id, project_id, hold_deal_id, from_status, expired_timer_at, overdue_by_ms, status_source, run_id,
        message_id, released_at, ord)
    ORDER BY r.ord`);
}
