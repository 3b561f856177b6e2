import { pruneJobRuns } from '../platform/jobs/run-log';
import type { JobContext, JobDefinition, JobSummary } from '../platform/jobs/types';
import { syncDlqMessages } from './dashboard/dlq';
import type { DashboardEnv } from './dashboard/dashboard-env';
import { consumerLag } from './dashboard/kafka-admin';
import { pruneSamples } from './dashboard/metric-samples';
import { getOverview, SERIES } from './dashboard/overview';
import { RECONCILIATION_DEFAULTS, setReconciliationGauge, type MismatchKind } from './reconciliation';
import { runReconciliationCycle } from './reconciliation-findings';

/**
 * Job `reconciliation` (every 5 min, UTC): keeps the crm ↔ chessboard findings that the reconciliation page and
 * the overview read (ops.reconciliation_findings, reconciliation-findings.ts): each cycle compares the bookings and
 * objects changed since the last one and every finding held, in one transaction with its findings and watermark
 * (the first cycle, and one a day, compares everything). The listed findings become the gauge
 * (pin_reconciliation_mismatches{kind}), a log event each, and the run summary in ops.job_runs.
 * It also keeps the dashboard's other inputs fresh when nobody is looking: it reads new DLQ records into
 * ops.dlq_messages and samples the overview figures for the sparklines. Parallel instances take turns on the
 * findings' lock; samples are written at most once a minute.
 * It keeps the run history to JOB_RUNS_RETENTION_MS (30 days by default): every cycle deletes the finished runs
 * that started before it (a few minutes' worth each time), so the history stays the size the jobs tab and the
 * overview are built for, and a worker restarted often still prunes.
 * Kafka being down does not fail the run: the findings then name no consumer-lag causes.
 */
export const RECONCILIATION_SCHEDULE = { cron: '0 */5 * * * *', timezone: 'UTC' } as const;

export interface ReconciliationSummary extends JobSummary {
  BookingNotHeld: number;
  HoldWithoutBooking: number;
  TimerMismatch: number;
  Total: number;
  ByKind: Record<MismatchKind, number>;
  /** full: every active booking and held object compared; incremental: what changed since ChangedSince and the findings held */
  Mode: 'full' | 'incremental';
  ChangedSince: string | null;
  BookingsCompared: number;
  ObjectsCompared: number;
  /** findings kept but not listed: their rows are still settling, or a repair was made */
  Pending: number;
  DlqRecordsRead: number;
  Sampled: boolean;
  /** finished job runs older than JOB_RUNS_RETENTION_MS removed by this cycle; null when that failed (logged) */
  DeletedJobRuns: number | null;
  KafkaError: string | null;
  DurationMs: number;
}

export function createReconciliationJob(opts: { now?: () => Date } = {}): JobDefinition<DashboardEnv> {
  return {
    name: 'reconciliation',
    schedule: () => ({ ...RECONCILIATION_SCHEDULE }),
    async run(ctx: JobContext<DashboardEnv>): Promise<ReconciliationSummary> {
      const started = performance.now();
      const now = opts.now?.() ?? new Date();
      const { db } = ctx.database;
      let kafkaError: string | null = null;
      let lag: number | null = null;
      let dlqRead = 0;
      try {
        const groups = await consumerLag(ctx.env);
        lag = groups.find((g) => g.group === 'chessboard.crm-property-object-status')?.lag ?? 0;
        dlqRead = (await syncDlqMessages(db, ctx.env, ctx.logger, { timeoutMs: 15_000 })).read;
      } catch (e) {
        kafkaError = e instanceof Error ? e.message : String(e);
        ctx.logger.warn({ err: { message: kafkaError } }, 'reconciliation: Kafka admin unavailable; causes from the database only');
      }
      const report = await db.transaction((tx) => runReconciliationCycle(tx, { now, runId: ctx.runId, consumerLag: lag, toleranceMs: RECONCILIATION_DEFAULTS.timerToleranceMs }));
      setReconciliationGauge(report.counts);
      for (const row of report.rows) {
        ctx.logger.warn({ kind: row.kind, propertyObjectId: row.propertyObjectId, bookingId: row.bookingId, holdDealId: row.holdDealId, cause: row.cause }, 'reconciliation mismatch');
      }
      let sampled = false;
      if (!ctx.signal.aborted) {
        try {
          await getOverview({ database: ctx.database, env: ctx.env, logger: ctx.logger }, { now, scope: null, sample: true, trendWindowMs: 60_000, extraSamples: { [SERIES.reconciliationMismatches]: report.total } });
          sampled = true;
          await pruneSamples(db, now);
        } catch (e) {
          ctx.logger.warn({ err: { message: String(e) } }, 'reconciliation: could not sample the overview');
        }
      }
      let deletedJobRuns: number | null = null;
      if (!ctx.signal.aborted) {
        try {
          deletedJobRuns = await pruneJobRuns(db, ctx.env.JOB_RUNS_RETENTION_MS);
        } catch (e) {
          ctx.logger.error({ err: { message: String(e) } }, 'reconciliation: could not prune the job run history');
        }
      }
      const summary: ReconciliationSummary = {
        BookingNotHeld: report.counts.booking_not_held,
        HoldWithoutBooking: report.counts.hold_without_booking,
        TimerMismatch: report.counts.timer_mismatch,
        Total: report.total,
        ByKind: report.counts,
        Mode: report.mode,
        ChangedSince: report.changedSince?.toISOString() ?? null,
        BookingsCompared: report.comparedBookings,
        ObjectsCompared: report.comparedObjects,
        Pending: report.pending,
        DlqRecordsRead: dlqRead,
        Sampled: sampled,
        DeletedJobRuns: deletedJobRuns,
        KafkaError: kafkaError,
        DurationMs: Math.round(performance.now() - started),
      };
      ctx.logger.info(summary, 'reconciliation completed');
      return summary;
    },
  };
}

export const reconciliationJob = createReconciliationJob();
