import { sql } from 'drizzle-orm';
import type { Database } from '../../platform/db';
import { crmPropertyObjects } from '../schema';

/**
 * Empties crm's projection of property objects, for the operator's rebuild from the chessboard's
 * snapshot: what the projection holds that the chessboard no longer has (an object whose deletion event
 * was lost) goes only this way. Until the snapshot's event of an object is consumed, CreateBooking
 * answers NOT_FOUND for it. Returns the number of rows removed.
 */
export async function emptyPropertyObjectProjection(database: Database): Promise<number> {
  const removed = await database.db.execute<{ n: number }>(sql`WITH gone AS (DELETE FROM ${crmPropertyObjects} RETURNING 1) SELECT count(*)::int AS n FROM gone`);
  return removed[0]?.n ?? 0;
}
