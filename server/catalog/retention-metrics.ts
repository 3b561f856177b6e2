import type { Database } from '../platform/db';
import { counter, gauge, histogram } from '../platform/metrics';
import { getDelistedBacklog, type DelistedBacklog } from './queries';

/** Metrics of DelistedRetentionJob (names fixed by the spec). */
export const retentionMetrics = {
  runDuration: histogram(
    'catalog_delisted_retention_run_duration_seconds',
    'Duration of delisted-retention runs that held the lock',
    [],
    [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 600, 1200, 1800],
  ),
  deletedPropertyObjectCards: counter('catalog_delisted_deleted_property_object_cards_total', 'Delisted property object cards physically deleted by retention'),
  deletedProjectCards: counter('catalog_delisted_deleted_project_cards_total', 'Delisted project cards physically deleted by retention'),
  deletedOverrides: counter('catalog_delisted_deleted_overrides_total', 'Display overrides (live and soft-deleted) deleted with their cards'),
  batchesProcessed: counter('catalog_delisted_retention_batches_processed', 'Committed delisted-retention batches'),
  lockContention: counter('catalog_delisted_retention_lock_contention_total', 'Runs skipped because another instance held the retention lock'),
};

let bound: { database: Database; retentionPeriodMs: number } | undefined;

/**
 * Makes catalog_delisted_backlog computable at scrape time from the process's database (like
 * bindOutboxMetrics). Without a binding the gauge shows what the last run set.
 */
export function bindCatalogMetrics(database: Database | undefined, retentionPeriodMs = 30 * 24 * 3600_000): void {
  bound = database ? { database, retentionPeriodMs } : undefined;
}

const backlogGauge = gauge('catalog_delisted_backlog', 'Delisted cards: all, and past the retention cutoff', ['kind', 'scope'], async function () {
  if (!bound) return;
  try {
    setBacklog(await getDelistedBacklog(bound.database.db, { retentionPeriodMs: bound.retentionPeriodMs }));
  } catch {
    // a failed scrape query keeps the last values; the scrape itself must not fail
  }
});

export function setBacklog(b: DelistedBacklog): void {
  backlogGauge.set({ kind: 'property_object', scope: 'all' }, b.propertyObjects.all);
  backlogGauge.set({ kind: 'property_object', scope: 'past_cutoff' }, b.propertyObjects.pastCutoff);
  backlogGauge.set({ kind: 'project', scope: 'all' }, b.projects.all);
  backlogGauge.set({ kind: 'project', scope: 'past_cutoff' }, b.projects.pastCutoff);
}
