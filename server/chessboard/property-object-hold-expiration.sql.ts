import { and, asc, lt, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { preparedQuery, type DbOrTx, type Tx } from '../platform/db';
import { AppError } from '../platform/errors';
import { outboxBatch, outboxChannel } from '../platform/outbox/write';
import { PROPERTY_OBJECT_ERRORS } from './property-object';
import { chessboardOutbox, holdReleases, projects, propertyObjects, propertyObjectStatusHistory } from './schema';
import { lockedColumns, statusTransitionRows, type StatusTransitionWrite } from './property-object-persistence';

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
const expiredPredicate = (phase: HoldPhase, cutoff: Date | Placeholder) => lt(PHASES[phase].timer, cutoff);

/**
 * Candidates of one phase, oldest timer first, at most `limit`, locked until the transaction ends.
 * SKIP LOCKED: a row locked by another job instance or by the CRM consumer (a late release/book being
 * applied right now) is passed over without waiting — each object goes to exactly one instance.
 * The guard still checks each row's status (INV-CHS-001) before it is released.
 */
export function selectExpiredHoldsForUpdate(tx: DbOrTx, phase: HoldPhase, cutoff: Date | Placeholder, limit: number | Placeholder) {
  return tx
    .select(lockedColumns)
    .from(propertyObjects)
    .where(expiredPredicate(phase, cutoff))
    .orderBy(asc(PHASES[phase].timer), asc(propertyObjects.id))
    .limit(limit)
    .for('update', { skipLocked: true });
}

/**
 * selectExpiredHoldsForUpdate as the job runs it: a named prepared statement per phase (platform/db.ts
 * preparedQuery), the cutoff and the limit its parameters. Sent with the transaction's BEGIN, it is one
 * round trip (unnamed, postgres.js waits for its Parse/Describe first: two). Its text never changes, so
 * after five executions PostgreSQL may run it with a generic plan — one that does not know the cutoff;
 * that plan is the ordered scan of the phase's partial index too (tested), as `timer < $1` implies the
 * index's `timer IS NOT NULL` whatever $1 is.
 */
const LOCK_CANDIDATES = {
  reserved: preparedQuery('hold_expiration_candidates_reserved',
    (db) => selectExpiredHoldsForUpdate(db, 'reserved', sql.placeholder('cutoff'), sql.placeholder('limit'))),
  booked: preparedQuery('hold_expiration_candidates_booked',
    (db) => selectExpiredHoldsForUpdate(db, 'booked', sql.placeholder('cutoff'), sql.placeholder('limit'))),
};

export function lockExpiredHolds(tx: Tx, phase: HoldPhase, cutoff: Date, limit: number): Promise<ExpiredHold[]> {
  return LOCK_CANDIDATES[phase](tx, { cutoff: cutoff.toISOString(), limit }) as Promise<ExpiredHold[]>;
}

export type ExpiredHold = Awaited<ReturnType<typeof selectExpiredHoldsForUpdate>>[number];

/**
 * Expired holds of a phase, without locking. With `upTo` (the last row a full batch selected) only
 * those at or before it in the batch order are counted — the rows the locking scan walked over.
 */
export async function countExpiredHolds(tx: DbOrTx, phase: HoldPhase, cutoff: Date, upTo?: { timer: Date; id: string }): Promise<number> {
  // prepared (one round trip, pipelined with its neighbours): one fixed text per phase and shape
  const name = `hold_expiration_count_${phase}${upTo ? '_up_to' : ''}`;
  const [row] = await expiredHoldsCountQuery(tx, phase, cutoff, upTo).prepare(name).execute();
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
    .select({ n: sql<number>`count(*)::int`.as('n') })
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

/**
 * What a hold_releases row adds to its object's transition: the rest of the row is the transition's
 * (property_object_id, tenant_id, project_id, from_status, message_id, hold_deal_id = the transition's
 * dealId) or the batch's (status_source, run_id, released_at).
 */
export interface HoldReleaseTimer {
  expiredTimerAt: Date;
  overdueByMs: number;
}

/**
 * The writes of a batch of releases as ONE statement (data-modifying CTEs), whatever the batch size:
 * each object's next state under the version it was read at, its status-changed envelope in
 * chessboard.outbox (validated with the contract in Node, outboxBatch, as writeOutbox does), its
 * status-history row and hold_releases row (all three in the order of `transitions`, so the outbox ids
 * follow it), the projects' recalc request (locked in id order, as requestProjectAggregatesRecalc does)
 * and the outbox NOTIFY. The batch is ONE jsonb parameter and the text never changes, so it runs as a
 * named prepared statement: one Bind + Execute, sent behind the SAVEPOINT in the same round trip —
 * separate unnamed statements would each wait for the one before (Parse/Describe, then Bind/Execute).
 * The history and hold_releases rows are built in the statement from the object's row (one per object,
 * carrying only what the next state does not: tenant, project, from_status, booking/deal, message id,
 * the expired timer) and the batch's scalars (reason, actor, causation, run, released_at — one value per
 * batch, separate parameters): sending each row whole repeated the ids, constants and timestamps and
 * made a third of the ~465 kB parameter that the client serialises and the server parses.
 * All or nothing: if an object's version moved, VERSION_CONFLICT is thrown once the statement is done
 * (the caller rolls its savepoint back); a row that a constraint refuses fails the statement.
 * `recalcProjects` empty: no recalc request (the caller makes it).
 */
export async function writeHoldReleases(
  tx: Tx,
  batch: {
    transitions: StatusTransitionWrite[]; timers: HoldReleaseTimer[]; runId: string; releasedAt: Date; releaseStatusSource: string;
    recalcProjects: string[]; recalcAt: Date;
  },
): Promise<void> {
  if (batch.transitions.length === 0) return;
  const { next, history, events } = statusTransitionRows(batch.transitions);
  const [first] = history;
  // the history's reason/actor/causation travel once per batch: a batch that mixes them is a caller's bug
  if (history.some((h) => h.reason !== first.reason || h.actor_id !== first.actor_id || h.causation_id !== first.causation_id)) {
    throw new Error('writeHoldReleases: one reason, actor and causation per batch');
  }
  const outbox = outboxBatch('chessboard', events);
  // every field written out: on Node 20, `{ ...o, <nine new keys> }` costs ~30 µs an object (V8 adds each
  // key after a spread on a slow path), 6 ms of a 200-object phase; this literal costs under 1 µs
  const objects = next.map((o, i) => {
    const h = history[i];
    const t = batch.timers[i];
    return {
      id: o.id, from_version: o.from_version, status: o.status, reserved_until: o.reserved_until, booked_until: o.booked_until,
      hold_deal_id: o.hold_deal_id, hold_booking_id: o.hold_booking_id, sold_at: o.sold_at, status_source: o.status_source,
      status_changed_at: o.status_changed_at, updated_at: o.updated_at, version: o.version,
      tenant_id: h.tenant_id, project_id: batch.transitions[i].object.projectId, from_status: h.from_status, booking_id: h.booking_id,
      deal_id: h.deal_id, message_id: h.message_id, expired_timer_at: t.expiredTimerAt.toISOString(), overdue_by_ms: t.overdueByMs,
    };
  });
  const json = JSON.stringify({
    objects, outbox: outbox.rows, notices: outbox.notices,
    projects: [...new Set(batch.recalcProjects)].sort(), recalc_at: batch.recalcAt.toISOString(),
  });
  // one statement, its parts as the WITH queries of one select (drizzle's $with), run prepared: its text is fixed.
  // The batch is read through scalar subqueries of `b` (evaluated once; read by several parts, so
  // materialized), never joined: a row of `b` in a FROM list travels whole (the ~450 kB jsonb) through the
  // plan — the recalc's FOR UPDATE sorted 9 copies of it on disk (4.6 MB, ~7 ms of a ~13 ms statement)
  const part = (name: string, body: SQL) => tx.$with(name, {}).as(body);
  const b = tx.$with('b', { j: sql`j` }).as(sql`SELECT ${json}::jsonb AS j`);
  const updatedPart = part('updated', sql`
      UPDATE ${propertyObjects} AS p SET
        status = v.status, reserved_until = v.reserved_until, booked_until = v.booked_until, hold_deal_id = v.hold_deal_id,
        hold_booking_id = v.hold_booking_id, sold_at = v.sold_at, status_source = v.status_source,
        status_changed_at = v.status_changed_at, updated_at = v.updated_at, version = v.version
      FROM jsonb_to_recordset((SELECT j -> 'objects' FROM b)) AS v(
        id uuid, from_version integer, status text, reserved_until timestamptz, booked_until timestamptz, hold_deal_id uuid,
        hold_booking_id uuid, sold_at timestamptz, status_source text, status_changed_at timestamptz, updated_at timestamptz, version integer)
      WHERE p.id = v.id AND p.version = v.from_version
      RETURNING p.id`);
  const eventsPart = part('events', sql`
      INSERT INTO ${chessboardOutbox} (message_id, topic, key, aggregate_type, aggregate_id, payload, headers)
      SELECT r.message_id, r.topic, r.key, r.aggregate_type, r.aggregate_id, r.payload, r.headers
      FROM ROWS FROM (jsonb_to_recordset((SELECT j -> 'outbox' FROM b))
        AS (message_id uuid, topic text, key text, aggregate_type text, aggregate_id uuid, payload jsonb, headers jsonb)) WITH ORDINALITY
        AS r(message_id, topic, key, aggregate_type, aggregate_id, payload, headers, ord)
      ORDER BY r.ord`);
  const historyPart = part('history', sql`
      -- the object's row and the batch's scalars (see above): the columns of statusTransitionRows' history row
      INSERT INTO ${propertyObjectStatusHistory} (property_object_id, tenant_id, from_status, to_status, status_source, at, booking_id, deal_id,
        actor_id, reason, causation_id, message_id, version)
      SELECT o.id, o.tenant_id, o.from_status, o.status, o.status_source, o.updated_at, o.booking_id, o.deal_id,
        ${first.actor_id}::text, ${first.reason}::text, ${first.causation_id}::uuid, o.message_id, o.version
      FROM ROWS FROM (jsonb_to_recordset((SELECT j -> 'objects' FROM b)) AS (id uuid, tenant_id uuid, from_status text, status text,
        status_source text, updated_at timestamptz, booking_id uuid, deal_id uuid, message_id uuid, version integer)) WITH ORDINALITY
        AS o(id, tenant_id, from_status, status, status_source, updated_at, booking_id, deal_id, message_id, version, ord)
      ORDER BY o.ord`);
  const releasedPart = part('released', sql`
      INSERT INTO ${holdReleases} (property_object_id, tenant_id, project_id, hold_deal_id, from_status, expired_timer_at, overdue_by_ms,
        status_source, run_id, message_id, released_at)
      SELECT o.id, o.tenant_id, o.project_id, o.deal_id, o.from_status, o.expired_timer_at, o.overdue_by_ms,
        ${batch.releaseStatusSource}::text, ${batch.runId}::uuid, o.message_id, ${batch.releasedAt.toISOString()}::timestamptz
      FROM ROWS FROM (jsonb_to_recordset((SELECT j -> 'objects' FROM b)) AS (id uuid, tenant_id uuid, project_id uuid, deal_id uuid,
        from_status text, expired_timer_at timestamptz, overdue_by_ms bigint, message_id uuid)) WITH ORDINALITY
        AS o(id, tenant_id, project_id, deal_id, from_status, expired_timer_at, overdue_by_ms, message_id, ord)
      ORDER BY o.ord`);
  const recalcPart = part('recalc', sql`
      -- ProjectAggregatesRecalcRequested (requestProjectAggregatesRecalc's statement): the row locks in id order
      UPDATE ${projects} SET aggregates_recalc_requested_at = coalesce(aggregates_recalc_requested_at, (SELECT (j ->> 'recalc_at')::timestamptz FROM b))
      WHERE id IN (
        SELECT id FROM ${projects}
        WHERE id IN (SELECT x::uuid FROM jsonb_array_elements_text((SELECT j -> 'projects' FROM b)) AS x)
        ORDER BY id FOR UPDATE)`);
  const notifiedPart = part('notified', sql`
      -- delivered at commit, dropped at rollback (platform/outbox/write.ts notifyOutbox)
      SELECT pg_notify(${outboxChannel('chessboard')}, n) FROM jsonb_array_elements_text((SELECT j -> 'notices' FROM b)) AS n
`);
  const [result] = await tx.with(b, updatedPart, eventsPart, historyPart, releasedPart, recalcPart, notifiedPart)
    .select({ updated: sql<string[] | null>`(SELECT array_agg(id::text) FROM updated)`, notified: sql<number>`(SELECT count(*) FROM notified)::int` })
    .from(b)
    .prepare('hold_expiration_write').execute();
  const updated = new Set(result?.updated ?? []);
  if (updated.size !== next.length) {
    const moved = next.filter((o) => !updated.has(o.id)).map((o) => o.id);
    throw new AppError(PROPERTY_OBJECT_ERRORS.VERSION_CONFLICT, 'CONFLICT', `property objects ${moved.join(', ')} changed concurrently`);
  }
}
