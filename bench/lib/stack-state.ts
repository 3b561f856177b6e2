import type postgres from 'postgres';
import { settle } from './db';

/**
 * Saved copy of the stack database's booking state (crm + chessboard rows the HTTP cases write), so
 * that each run of booking-commands and the saga start from the same rows.
 */
const SAVED: readonly (readonly [string, string])[] = [
  ['crm.deals', 'bench.saved_deals'],
  ['crm.bookings', 'bench.saved_bookings'],
  ['crm.booking_timeline', 'bench.saved_booking_timeline'],
  ['crm.outbox', 'bench.saved_crm_outbox'],
  ['crm.idempotency_keys', 'bench.saved_idempotency_keys'],
  ['chessboard.property_objects', 'bench.saved_property_objects'],
  ['chessboard.crm_booking_versions', 'bench.saved_crm_booking_versions'],
  ['chessboard.property_object_status_history', 'bench.saved_status_history'],
  ['chessboard.inbox', 'bench.saved_chessboard_inbox'],
  ['chessboard.outbox', 'bench.saved_chessboard_outbox'],
  ['chessboard.hold_mismatches', 'bench.saved_hold_mismatches'],
  ['chessboard.projects', 'bench.saved_projects'],
];

export async function saveBookingState(sql: postgres.Sql): Promise<void> {
  for (const [table, copy] of SAVED) {
    await sql.unsafe(`DROP TABLE IF EXISTS ${copy}`);
    await sql.unsafe(`CREATE TABLE ${copy} AS SELECT * FROM ${table}`);
  }
}

/** Every saved table back to its copy (TRUNCATE + INSERT keeps ids; deals are rewritten in place: bookings reference them). */
export async function restoreBookingState(sql: postgres.Sql): Promise<void> {
  await sql.begin(async (tx) => {
    const truncated = SAVED.map(([t]) => t).filter((t) => t !== 'crm.deals' && t !== 'chessboard.property_objects' && t !== 'chessboard.projects');
    await tx.unsafe(`TRUNCATE ${truncated.join(', ')}`);
    await tx.unsafe(`UPDATE crm.deals d SET status = s.status, version = s.version, updated_at = s.updated_at
      FROM bench.saved_deals s WHERE d.id = s.id AND d.version <> s.version`);
    await tx.unsafe(`UPDATE chessboard.property_objects p SET status = s.status, reserved_until = s.reserved_until, booked_until = s.booked_until,
      hold_deal_id = s.hold_deal_id, hold_booking_id = s.hold_booking_id, sold_at = s.sold_at, status_source = s.status_source,
      status_changed_at = s.status_changed_at, updated_at = s.updated_at, version = s.version
      FROM bench.saved_property_objects s WHERE p.id = s.id AND p.version <> s.version`);
    await tx.unsafe(`UPDATE chessboard.projects p SET aggregates_recalc_requested_at = s.aggregates_recalc_requested_at,
      aggregates_recalculated_at = s.aggregates_recalculated_at, property_objects_free_count = s.property_objects_free_count,
      property_objects_held_count = s.property_objects_held_count, property_objects_sold_count = s.property_objects_sold_count,
      property_objects_total_count = s.property_objects_total_count, version = s.version, updated_at = s.updated_at
      FROM bench.saved_projects s WHERE p.id = s.id`);
    for (const [table, copy] of SAVED) {
      if (truncated.includes(table)) await tx.unsafe(`INSERT INTO ${table} SELECT * FROM ${copy}`);
    }
  });
  await settle(sql, SAVED.map(([t]) => t));
}
