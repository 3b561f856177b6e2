import { and, asc, eq, gt, type SQL } from 'drizzle-orm';
import type { Database } from '../../platform/db';
import { writeOutboxMany } from '../../platform/outbox/write';
import { propertyObjectUpsertedEvent } from './upsert-property-object';
import { propertyObjects } from '../schema';

/**
 * The snapshot of the chessboard: every property object's current state republished as
 * pin.chessboard.property-object-upserted.v1 through chessboard.outbox (the relay publishes it as any
 * other event). A projection that lost events (a reset consumer group, a topic emptied of old segments,
 * a truncated table) gets every object back from it.
 *
 * Safe for the consumers: each event carries the object's current version, so a projection that already
 * has that version keeps its row (a stale no-op), one that has an older version or none takes it. A
 * change made while the snapshot runs has a higher version than what the snapshot read, so the snapshot
 * never undoes it, whatever the order of the two on the broker.
 *
 * Batches of `batchSize` objects in id order, one transaction each: the rows are read without a lock
 * (the hold-expiration job and the consumers are never blocked by a snapshot) and their events written
 * in one INSERT. Objects deleted by the chessboard have no row and are not in the snapshot; their
 * deletion events are on the compacted deleted topic.
 */

export interface SnapshotOptions {
  /** of the operator's run: every event of the snapshot carries it */
  correlationId: string;
  /** only this tenant's objects */
  tenantId?: string;
  batchSize?: number;
  signal?: AbortSignal;
  /** after each committed batch: the message ids of its events */
  onBatch?: (batch: { objects: number; messageIds: string[] }) => void | Promise<void>;
}

export interface SnapshotSummary {
  objects: number;
  batches: number;
  /** false when `signal` stopped it between two batches */
  complete: boolean;
}

export const SNAPSHOT_BATCH_SIZE = 1000;

export async function publishPropertyObjectSnapshot(database: Database, opts: SnapshotOptions): Promise<SnapshotSummary> {
  const batchSize = opts.batchSize ?? SNAPSHOT_BATCH_SIZE;
  let after: string | null = null;
  let objects = 0;
  let batches = 0;
  for (;;) {
    if (opts.signal?.aborted) return { objects, batches, complete: false };
    const from: string | null = after;
    const batch = await database.db.transaction(async (tx) => {
      const conditions: (SQL | undefined)[] = [
        from === null ? undefined : gt(propertyObjects.id, from),
        opts.tenantId === undefined ? undefined : eq(propertyObjects.tenantId, opts.tenantId),
      ];
      const rows = await tx.select().from(propertyObjects).where(and(...conditions)).orderBy(asc(propertyObjects.id)).limit(batchSize);
      const messageIds = await writeOutboxMany(tx, 'chessboard', rows.map((row) => propertyObjectUpsertedEvent(row, opts.correlationId)));
      return { lastId: rows.at(-1)?.id ?? null, objects: rows.length, messageIds };
    });
    if (batch.objects === 0) return { objects, batches, complete: true };
    objects += batch.objects;
    batches++;
    after = batch.lastId;
    await opts.onBatch?.({ objects: batch.objects, messageIds: batch.messageIds });
    if (batch.objects < batchSize) return { objects, batches, complete: true };
  }
}
