import { getDelistedBacklog, getNextRetentionCandidates } from '../../catalog/queries';
import type { Database } from '../../platform/db';
import type { DashboardEnv } from './dashboard-env';
import type { Logger } from '../../platform/logger';
import { setReconciliationGauge } from '../reconciliation';
import { readFindings } from '../reconciliation-findings';
import { getDlqSizes, listDlqMessages, syncDlqThrottled } from './dlq';
import { consumerGroups, consumerLag } from './kafka-admin';
import { readTrends } from './metric-samples';
import { SERIES, type ConsumerGroupStatus } from './overview';
import { holdReleaseHistogram, listHoldReleases, listStuckHolds } from './hold-queries';
import { listRetentionRuns, retentionLockContention } from './job-queries';
import { registeredOutboxes } from '../../platform/registry';
import { estimateConsumerTimeLag, getOutboxStats, listFailingOutboxRows } from './messaging-queries';
import { type TenantScope } from './sql';

/**
 * What each ops dashboard tab reads, one function per tab (the ops router's procedures are one call each):
 * the tab's queries run together, with the settings the page shows beside them. `scope` is the actor's
 * tenant (null = every tenant); infrastructure figures (outboxes, Kafka, retention) are global.
 */
export interface ViewDeps {
  database: Database;
  env: DashboardEnv;
  logger: Logger;
}

const HOUR = 3600_000;

export async function stuckHoldsView(
  { database, env }: ViewDeps,
  input: { scope: TenantScope; filter: Parameters<typeof listStuckHolds>[1]['filter'] },
) {
  const now = new Date();
  const rows = await listStuckHolds(database.db, { now, graceMs: env.HOLD_EXPIRATION_GRACE_MS, scope: input.scope, filter: input.filter });
  return { asOf: now, graceMs: env.HOLD_EXPIRATION_GRACE_MS, rows };
}

export async function holdReleasesView(
  { database }: ViewDeps,
  input: { scope: TenantScope; source: Parameters<typeof listHoldReleases>[1]['source']; rangeHours: number },
) {
  const now = new Date();
  const [rows, histogram] = await Promise.all([
    listHoldReleases(database.db, { now, scope: input.scope, source: input.source, sinceMs: input.rangeHours * HOUR }),
    holdReleaseHistogram(database.db, { now, scope: input.scope, rangeMs: input.rangeHours * HOUR }),
  ]);
  return { asOf: now, rows, histogram };
}

/** Outboxes, failing rows, consumer lag (offsets and an estimate in time) and DLQ sizes; Kafka down is a field, not an error. */
export async function messagingView({ database, env }: ViewDeps, input: { scope: TenantScope }) {
  const now = new Date();
  const { db } = database;
  const outboxes = await getOutboxStats(db, { now });
  const failing = (await Promise.all(registeredOutboxes().map((outbox) => listFailingOutboxRows(db, { outbox, limit: 50, scope: input.scope })))).flat();
  let consumers: ConsumerGroupStatus[] | null = null;
  let kafkaError: string | null = null;
  let dlq = null;
  try {
    const groups = new Map(consumerGroups().map((g) => [g.group, g]));
    consumers = await Promise.all((await consumerLag(env)).map(async (l) => ({
      ...l,
      estimatedLagMs: l.lag > 0 ? await estimateConsumerTimeLag(db, { now, group: l.group, inbox: groups.get(l.group)!.inbox, topics: groups.get(l.group)!.topics }) : null,
    })));
    dlq = await getDlqSizes(db, env);
  } catch (e) {
    kafkaError = e instanceof Error ? e.message : String(e);
  }
  return { asOf: now, outboxes, failing, consumers, dlq, kafkaError };
}

/** The DLQ records (synced from Kafka at most every few seconds; a failed sync still lists what is recorded). */
export async function dlqView({ database, env, logger }: ViewDeps, input: { scope: TenantScope; group?: string; includeDecided: boolean }) {
  let syncError: string | null = null;
  try {
    await syncDlqThrottled(database.db, env, logger);
  } catch (e) {
    syncError = e instanceof Error ? e.message : String(e);
  }
  const rows = await listDlqMessages(database.db, { scope: input.scope, group: input.group, includeDecided: input.includeDecided });
  return { rows, syncError };
}

/** The Delisted backlog and the retention job: what the next run would take, its runs, lock contention, 30-day trends. */
export async function catalogView({ database, env }: ViewDeps) {
  const now = new Date();
  const { db } = database;
  const cutoff = new Date(now.getTime() - env.DELISTED_RETENTION_PERIOD_MS);
  const [backlog, candidates, runs, contention, trends] = await Promise.all([
    getDelistedBacklog(db, { cutoff }),
    getNextRetentionCandidates(db, { cutoff, batchSize: env.DELISTED_RETENTION_BATCH_SIZE, maxBatchesPerRun: env.DELISTED_RETENTION_MAX_BATCHES_PER_RUN }),
    listRetentionRuns(db, { limit: 30 }),
    retentionLockContention(db, { now, sinceMs: 30 * 24 * HOUR }),
    readTrends(db, [SERIES.delistedAll, SERIES.delistedPastCutoff], new Date(now.getTime() - 30 * 24 * HOUR), 120),
  ]);
  return {
    asOf: now, backlog, candidates, runs, contention, trends,
    settings: {
      retentionPeriodMs: env.DELISTED_RETENTION_PERIOD_MS, batchSize: env.DELISTED_RETENTION_BATCH_SIZE,
      maxBatchesPerRun: env.DELISTED_RETENTION_MAX_BATCHES_PER_RUN, maxRunDurationMs: env.DELISTED_RETENTION_MAX_RUN_DURATION_MS,
    },
  };
}

/**
 * The crm ↔ chessboard reconciliation: the findings the job keeps (and the repairs update), not a comparison of
 * every booking on each view; an unscoped (ops) read also refreshes the findings gauge.
 */
export async function reconciliationView({ database }: ViewDeps, input: { scope: TenantScope }) {
  const report = await readFindings(database.db, { scope: input.scope });
  if (input.scope === null) setReconciliationGauge(report.counts);
  return report;
}
