/**
 * What is abnormal on the overview, by the specs' alert rules (pure: figures in, findings out).
 *   crm-booking-saga "Alerts": an object stuck in Reserved/Booked (hold-expiration rising); consumer lag
 *     > 5 min; outbox backlog > 1000; hold_mismatch_total rising.
 *   chessboard-property-object-hold-expiration: items_total is ≈ 0 normally — each release = a lost CRM release.
 *   catalog-delisted-retention-job "Alerts": the job has not run for > 26 h; catalog_delisted_backlog grows
 *     N days in a row; error rate of runs.
 * The UI turns each code into a sentence ("what it means") and the runbook action that applies.
 */

export const THRESHOLDS = {
  consumerLagMs: 5 * 60_000,
  outboxBacklog: 1000,
  retentionMaxAgeMs: 26 * 3600_000,
  /** "catalog_delisted_backlog растёт N дней подряд" */
  delistedGrowingDays: 3,
} as const;

export type AlertSeverity = 'critical' | 'warning' | 'info';

export type AlertCode =
  | 'HOLDS_PAST_GRACE'
  | 'LOST_RELEASES'
  | 'HOLD_MISMATCHES'
  | 'CONSUMER_LAG'
  | 'OUTBOX_BACKLOG'
  | 'OUTBOX_FAILING'
  | 'DLQ_NOT_EMPTY'
  | 'RETENTION_NOT_RUN'
  | 'DELISTED_BACKLOG_GROWING'
  | 'JOB_FAILED'
  | 'JOB_PAUSED'
  | 'RECONCILIATION_MISMATCHES'
  | 'KAFKA_UNAVAILABLE';

export interface Alert {
  code: AlertCode;
  severity: AlertSeverity;
  /** which tile it belongs to */
  tile: 'holds' | 'releases' | 'outbox' | 'consumers' | 'dlq' | 'delisted' | 'jobs' | 'reconciliation';
  /** the subject (outbox, group, job) when the tile has several */
  subject?: string;
  /** the figures the sentence needs */
  values: Record<string, number | string>;
}

export interface AlertInput {
  now: Date;
  holdsPastGrace: number;
  lostReleasesLastHour: number;
  holdMismatchesLastHour: number;
  outboxes: { outbox: string; pending: number; failing: number }[];
  consumers: { group: string; lag: number; estimatedLagMs: number | null }[] | null;
  dlq: { group: string; size: number }[] | null;
  kafkaError: string | null;
  /** last succeeded delisted-retention run (null: none recorded) */
  retentionLastSucceededAt: Date | null;
  /** the first job run recorded on this installation (null: the workers have not run a job yet) */
  jobsRecordedSince: Date | null;
  /** daily closing values of the Delisted backlog, oldest first */
  delistedDaily: number[];
  jobs: { name: string; lastStatus: string | null; paused: boolean }[];
  reconciliationMismatches: number | null;
}

/** True when the last `days` day-over-day changes are all increases. */
export function growingDaysInARow(daily: number[], days: number): boolean {
  if (daily.length < days + 1) return false;
  const tail = daily.slice(-(days + 1));
  return tail.every((v, i) => i === 0 || v > tail[i - 1]!);
}

export function evaluateAlerts(i: AlertInput): Alert[] {
  const alerts: Alert[] = [];
  if (i.holdsPastGrace > 0) alerts.push({ code: 'HOLDS_PAST_GRACE', severity: 'critical', tile: 'holds', values: { count: i.holdsPastGrace } });
  if (i.lostReleasesLastHour > 0) alerts.push({ code: 'LOST_RELEASES', severity: 'warning', tile: 'releases', values: { count: i.lostReleasesLastHour } });
  if (i.holdMismatchesLastHour > 0) alerts.push({ code: 'HOLD_MISMATCHES', severity: 'warning', tile: 'dlq', values: { count: i.holdMismatchesLastHour } });
  for (const o of i.outboxes) {
    if (o.pending > THRESHOLDS.outboxBacklog) alerts.push({ code: 'OUTBOX_BACKLOG', severity: 'critical', tile: 'outbox', subject: o.outbox, values: { count: o.pending, threshold: THRESHOLDS.outboxBacklog } });
    if (o.failing > 0) alerts.push({ code: 'OUTBOX_FAILING', severity: 'warning', tile: 'outbox', subject: o.outbox, values: { count: o.failing } });
  }
  if (i.kafkaError) alerts.push({ code: 'KAFKA_UNAVAILABLE', severity: 'critical', tile: 'consumers', values: { error: i.kafkaError } });
  for (const c of i.consumers ?? []) {
    if (c.lag > 0 && c.estimatedLagMs !== null && c.estimatedLagMs > THRESHOLDS.consumerLagMs) {
      alerts.push({ code: 'CONSUMER_LAG', severity: 'critical', tile: 'consumers', subject: c.group, values: { count: c.lag, minutes: Math.round(c.estimatedLagMs / 60_000) } });
    }
  }
  for (const d of i.dlq ?? []) {
    if (d.size > 0) alerts.push({ code: 'DLQ_NOT_EMPTY', severity: 'warning', tile: 'dlq', subject: d.group, values: { count: d.size } });
  }
  const retentionAge = i.retentionLastSucceededAt ? i.now.getTime() - i.retentionLastSucceededAt.getTime() : null;
  // "never ran" means a nightly window passed without it: a fresh installation has not had one yet
  const windowPassed = i.jobsRecordedSince !== null && i.now.getTime() - i.jobsRecordedSince.getTime() > THRESHOLDS.retentionMaxAgeMs;
  if (retentionAge === null ? windowPassed : retentionAge > THRESHOLDS.retentionMaxAgeMs) {
    alerts.push({ code: 'RETENTION_NOT_RUN', severity: 'warning', tile: 'delisted', subject: 'delisted-retention', values: { hours: retentionAge === null ? -1 : Math.floor(retentionAge / 3600_000) } });
  }
  if (growingDaysInARow(i.delistedDaily, THRESHOLDS.delistedGrowingDays)) {
    alerts.push({ code: 'DELISTED_BACKLOG_GROWING', severity: 'warning', tile: 'delisted', values: { days: THRESHOLDS.delistedGrowingDays } });
  }
  for (const j of i.jobs) {
    if (j.lastStatus === 'failed') alerts.push({ code: 'JOB_FAILED', severity: 'warning', tile: 'jobs', subject: j.name, values: { job: j.name } });
    if (j.paused) alerts.push({ code: 'JOB_PAUSED', severity: 'info', tile: 'jobs', subject: j.name, values: { job: j.name } });
  }
  if (i.reconciliationMismatches !== null && i.reconciliationMismatches > 0) {
    alerts.push({ code: 'RECONCILIATION_MISMATCHES', severity: 'warning', tile: 'reconciliation', values: { count: i.reconciliationMismatches } });
  }
  const order: Record<AlertSeverity, number> = { critical: 0, warning: 1, info: 2 };
  return alerts.sort((a, b) => order[a.severity] - order[b.severity]);
}
