import type { Database } from '../platform/db';
import { counter, gauge, histogram } from '../platform/metrics';
import { countExpiredHolds } from './property-object-hold-expiration.sql';
import { TOPICS } from '../platform/kafka/topics';
import type { CrmEventKind } from './property-object';

/** The crm topics the chessboard consumer reads (crm-property-object-status.consumer.ts), the hold-guard counter's label values. */
export const CRM_STATUS_CONSUMED_TOPICS = [
  TOPICS.bookingCreated,
  TOPICS.bookingConfirmed,
  TOPICS.bookingExtended,
  TOPICS.bookingExpired,
  TOPICS.bookingCancelled,
  TOPICS.dealCancelled,
  TOPICS.dealSaleStarted,
] as const;

/** Prometheus metrics of the chessboard context (names are the specs' names). */

// --- property-object-hold-expiration ---------------------------------------------------------------
export const holdExpirationRuns = counter(
  'chessboard_property_object_hold_expiration_run_total',
  'Cycles of the hold-expiration safety net (liveness)',
);
export const holdExpirationCycleDuration = histogram(
  'chessboard_property_object_hold_expiration_cycle_duration_seconds',
  'Duration of one hold-expiration cycle',
  [],
  [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
);
export const holdExpirationItems = counter(
  'chessboard_property_object_hold_expiration_items_total',
  'Holds released by the safety net; every increment is a lost CRM release',
  ['phase'],
  { phase: ['reserved', 'booked'] },
);
export const holdExpirationSkipLocked = counter(
  'chessboard_property_object_hold_expiration_skip_locked_total',
  'Expired holds skipped because another instance or the CRM consumer held the row lock',
);
export const holdExpirationErrors = counter(
  'chessboard_property_object_hold_expiration_errors_total',
  'Objects the hold-expiration job failed to release (poison items), plus cycles that failed and rolled back',
);

let backlogSource: { database: Database; graceMs: number } | undefined;

/**
 * The backlog gauge is set after every cycle; a process that serves /metrics can also bind a database
 * so that the gauge is recomputed at scrape time (objects held past grace, not yet released).
 */
export function bindHoldExpirationMetrics(database: Database, graceMs: number): void {
  backlogSource = { database, graceMs };
}
export function unbindHoldExpirationMetrics(): void {
  backlogSource = undefined;
}

export const holdExpirationBacklog = gauge(
  'chessboard_property_object_hold_expiration_backlog',
  'Held objects whose timer expired more than the grace ago and that are not released yet',
  [],
  async function () {
    if (!backlogSource) return; // keep the value the last cycle set
    const cutoff = new Date(Date.now() - backlogSource.graceMs);
    try {
      const [reserved, booked] = await Promise.all([
        countExpiredHolds(backlogSource.database.db, 'reserved', cutoff),
        countExpiredHolds(backlogSource.database.db, 'booked', cutoff),
      ]);
      this.set(reserved + booked);
    } catch {
      // a scrape must not fail because the database is briefly unavailable: keep the last value
    }
  },
);

// --- crm-property-object-status consumer -----------------------------------------------------------
export const crmHoldMismatches = counter(
  'chessboard_crm_hold_mismatch_total',
  'CRM booking events refused by the hold guard INV-CHS-003 (sent to the DLQ)',
  ['topic'],
  { topic: CRM_STATUS_CONSUMED_TOPICS },
);
export const crmStatusEvents = counter(
  'chessboard_crm_property_object_status_events_total',
  'CRM booking events handled by the chessboard consumer, by event kind and outcome',
  ['event', 'result'],
  { event: ['created', 'confirmed', 'extended', 'released', 'sale-started', 'none'] satisfies (CrmEventKind | 'none')[], result: ['applied', 'no-op', 'rejected'] },
);

// --- project-aggregates-recalc ---------------------------------------------------------------------
export const projectAggregatesRecalculated = counter(
  'chessboard_project_aggregates_recalc_projects_total',
  'Projects whose aggregates were recomputed, by whether the counts changed',
  ['changed'],
  { changed: ['true', 'false'] },
);
