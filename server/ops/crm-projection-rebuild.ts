import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { publishPropertyObjectSnapshot, SNAPSHOT_BATCH_SIZE } from '../chessboard/commands';
import { emptyPropertyObjectProjection } from '../crm/commands/empty-property-object-projection';
import { CONSUMER_GROUPS } from '../contracts/consumer-groups';
import type { Database, DbOrTx } from '../platform/db';
import { uuidArray } from '../platform/db';

/**
 * The operator's rebuild of crm's projection of property objects (crm.property_objects, DESIGN decision
 * 8) and its proof: the chessboard republishes every object (its snapshot), the running worker's relay
 * and crm's projection consumer carry it over as any other event, and the projection is then compared
 * with the chessboard row by row. A read-only ops view across schemas for the comparison; the writes go
 * through the owners (chessboard's snapshot, crm's reset).
 */

export interface ProjectionComparison {
  /** rows of chessboard.property_objects */
  chessboardObjects: number;
  /** rows of crm.property_objects that are not deleted */
  crmObjects: number;
  /** objects of the chessboard that crm does not have, or has as deleted (CreateBooking: NOT_FOUND) */
  missingInCrm: number;
  /** objects crm has as existing that the chessboard does not have */
  extraInCrm: number;
  statusDiffers: number;
  /** tenant or project */
  ownerDiffers: number;
  priceDiffers: number;
  /** objects with any of the above */
  differences: number;
  /** the first differences by id, for the operator to look at */
  sample: ProjectionDifference[];
}

export interface ProjectionDifference {
  propertyObjectId: string;
  kind: 'missing-in-crm' | 'extra-in-crm' | 'differs';
  chessboard: ObjectState | null;
  crm: ObjectState | null;
}

interface ObjectState { tenantId: string; projectId: string; status: string; price: number | null; version: number }

const CONSUMER_GROUP = CONSUMER_GROUPS.crmPropertyObjectProjection;

/** What is compared: the fields crm's projection keeps of an object. */
const DIFFERS = sql`(c.status <> p.status OR c.tenant_id <> p.tenant_id OR c.project_id <> p.project_id OR c.price IS DISTINCT FROM p.price)`;
const PAIRS = sql`chessboard.v_property_objects c FULL JOIN crm.v_property_objects p ON p.id = c.id`;

export async function compareCrmProjection(db: DbOrTx, opts: { sampleSize?: number } = {}): Promise<ProjectionComparison> {
  const [counts] = await db.execute<Record<string, number>>(sql`
    SELECT count(c.id)::int AS chessboard_objects,
           count(p.id) FILTER (WHERE NOT p.deleted)::int AS crm_objects,
           count(*) FILTER (WHERE c.id IS NOT NULL AND (p.id IS NULL OR p.deleted))::int AS missing_in_crm,
           count(*) FILTER (WHERE c.id IS NULL AND NOT p.deleted)::int AS extra_in_crm,
           count(*) FILTER (WHERE c.id IS NOT NULL AND NOT p.deleted AND c.status <> p.status)::int AS status_differs,
           count(*) FILTER (WHERE c.id IS NOT NULL AND NOT p.deleted AND (c.tenant_id <> p.tenant_id OR c.project_id <> p.project_id))::int AS owner_differs,
           count(*) FILTER (WHERE c.id IS NOT NULL AND NOT p.deleted AND c.price IS DISTINCT FROM p.price)::int AS price_differs,
           count(*) FILTER (WHERE (c.id IS NOT NULL AND (p.id IS NULL OR p.deleted)) OR (c.id IS NULL AND NOT p.deleted)
                              OR (c.id IS NOT NULL AND NOT p.deleted AND ${DIFFERS}))::int AS differences
    FROM ${PAIRS}`);
  const rows = await db.execute<Record<string, unknown>>(sql`
    SELECT coalesce(c.id, p.id) AS id,
           CASE WHEN c.id IS NULL THEN 'extra-in-crm' WHEN p.id IS NULL OR p.deleted THEN 'missing-in-crm' ELSE 'differs' END AS kind,
           c.tenant_id AS c_tenant, c.project_id AS c_project, c.status AS c_status, c.price::float8 AS c_price, c.version AS c_version,
           p.tenant_id AS p_tenant, p.project_id AS p_project, p.status AS p_status, p.price::float8 AS p_price, p.source_version AS p_version,
           p.deleted AS p_deleted
    FROM ${PAIRS}
    WHERE (c.id IS NOT NULL AND (p.id IS NULL OR p.deleted)) OR (c.id IS NULL AND NOT p.deleted) OR (c.id IS NOT NULL AND NOT p.deleted AND ${DIFFERS})
    ORDER BY 1
    LIMIT ${opts.sampleSize ?? 20}`);
  const state = (r: Record<string, unknown>, side: 'c' | 'p'): ObjectState | null =>
    r[`${side}_tenant`] === null || (side === 'p' && r.p_deleted === true) ? null : {
      tenantId: String(r[`${side}_tenant`]), projectId: String(r[`${side}_project`]), status: String(r[`${side}_status`]),
      price: r[`${side}_price`] === null ? null : Number(r[`${side}_price`]), version: Number(r[`${side}_version`]),
    };
  return {
    chessboardObjects: counts.chessboard_objects,
    crmObjects: counts.crm_objects,
    missingInCrm: counts.missing_in_crm,
    extraInCrm: counts.extra_in_crm,
    statusDiffers: counts.status_differs,
    ownerDiffers: counts.owner_differs,
    priceDiffers: counts.price_differs,
    differences: counts.differences,
    sample: rows.map((r) => ({ propertyObjectId: String(r.id), kind: r.kind as ProjectionDifference['kind'], chessboard: state(r, 'c'), crm: state(r, 'p') })),
  };
}

/** How many of `messageIds` crm's projection consumer has recorded in crm.inbox (applied, no-op or rejected). */
async function processedCount(db: DbOrTx, messageIds: string[]): Promise<number> {
  const [row] = await db.execute<{ n: number }>(sql`
    SELECT count(*)::int AS n FROM crm.inbox WHERE consumer = ${CONSUMER_GROUP} AND message_id = ANY(${uuidArray(messageIds)})`);
  return row.n;
}

export interface RebuildOptions {
  /** empty crm's projection first (rows the chessboard no longer has go only this way) */
  reset?: boolean;
  /** how long to wait for the worker to carry the snapshot over */
  timeoutMs?: number;
  batchSize?: number;
  pollMs?: number;
  correlationId?: string;
  signal?: AbortSignal;
  /** progress lines for the operator */
  onProgress?: (line: string) => void;
}

export interface RebuildReport {
  correlationId: string;
  removedFromCrm: number | null;
  snapshotObjects: number;
  /** snapshot events crm's consumer has recorded */
  processed: number;
  /** snapshot events it had not recorded when the wait ended (worker down, consumer behind) */
  notProcessed: number;
  waitMs: number;
  comparison: ProjectionComparison;
  /** the projection equals the chessboard and every snapshot event was consumed */
  equal: boolean;
}

/**
 * reset (optional) → the chessboard's snapshot → wait until crm.inbox has every snapshot event (the worker's
 * relay publishes them, crm's consumer applies them) → compare. Needs the worker running.
 */
export async function rebuildCrmProjection(database: Database, opts: RebuildOptions = {}): Promise<RebuildReport> {
  const correlationId = opts.correlationId ?? randomUUID();
  const say = opts.onProgress ?? (() => {});
  let removedFromCrm: number | null = null;
  if (opts.reset) {
    removedFromCrm = await emptyPropertyObjectProjection(database);
    say(`emptied crm.property_objects: ${removedFromCrm} rows removed`);
  }
  const pending: string[][] = [];
  const snapshot = await publishPropertyObjectSnapshot(database, {
    correlationId, batchSize: opts.batchSize ?? SNAPSHOT_BATCH_SIZE, signal: opts.signal,
    onBatch: (b) => { pending.push(b.messageIds); },
  });
  say(`snapshot: ${snapshot.objects} objects republished in ${snapshot.batches} batches (correlationId ${correlationId})`);

  const started = Date.now();
  const deadline = started + (opts.timeoutMs ?? 600_000);
  let processed = 0;
  let lastSaid = 0;
  while (pending.length > 0 && !opts.signal?.aborted) {
    for (let i = pending.length - 1; i >= 0; i--) {
      if ((await processedCount(database.db, pending[i])) === pending[i].length) {
        processed += pending[i].length;
        pending.splice(i, 1);
      }
    }
    if (pending.length === 0 || Date.now() > deadline) break;
    if (Date.now() - lastSaid >= 5_000) {
      say(`waiting for ${CONSUMER_GROUP}: ${processed} of ${snapshot.objects} snapshot events consumed`);
      lastSaid = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, opts.pollMs ?? 500));
  }
  // a batch not whole at the deadline still counts what of it was consumed
  for (const ids of pending) processed += await processedCount(database.db, ids);
  const notProcessed = snapshot.objects - processed;
  const waitMs = Date.now() - started;
  if (notProcessed > 0) {
    say(`${notProcessed} of ${snapshot.objects} snapshot events not consumed after ${Math.round(waitMs / 1000)} s: is the worker running (outbox relay and ${CONSUMER_GROUP})? Its DLQ and lag are on the ops page.`);
  }
  const comparison = await compareCrmProjection(database.db);
  return {
    correlationId, removedFromCrm, snapshotObjects: snapshot.objects, processed, notProcessed, waitMs, comparison,
    equal: notProcessed === 0 && comparison.differences === 0 && snapshot.complete,
  };
}
