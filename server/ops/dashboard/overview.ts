import { getDelistedBacklog, type DelistedBacklog } from '../../catalog/queries';
import type { Database } from '../../platform/db';
import type { DashboardEnv } from './dashboard-env';
import type { Logger } from '../../platform/logger';
import { registeredJobNames } from '../../platform/registry';
import { findingCounts } from '../reconciliation-findings';
import { evaluateAlerts, THRESHOLDS, type Alert } from './alerts';
import { getDlqSizes, type DlqGroupSize } from './dlq';
import { consumerGroups, consumerLag, dlqTopicOffsets, type GroupLag } from './kafka-admin';
import { dailyClosingValues, readTrends, recordSamples, type Samples, type TrendPoint } from './metric-samples';
import { getHoldMismatchCounts, getLostReleaseCounts, getStuckHoldsSummary, type HoldMismatchCounts, type LostReleaseCounts, type StuckHoldsSummary } from './hold-queries';
import { firstJobRunAt, jobControls, lastJobRuns, type JobRunRow } from './job-queries';
import { estimateConsumerTimeLag, getOutboxStats, type OutboxStats } from './messaging-queries';
import { type TenantScope } from './sql';

/**
 * The overview: every tile's figure, the findings of the alert rules, and the sparkline history.
 * Kafka figures (lag, DLQ size) come from the broker's admin API; if the broker does not answer, the
 * database figures are still shown and the Kafka tiles say so.
 */

export interface ConsumerGroupStatus extends GroupLag {
  /** age of the oldest message the group has not processed yet (estimate), null when it is caught up */
  estimatedLagMs: number | null;
}

export interface JobStatus {
  name: string;
  paused: boolean;
  lastRun: JobRunRow | null;
  lastSucceededAt: Date | null;
}

export interface Overview {
  asOf: Date;
  /** null: all tenants; otherwise the tenant the figures are limited to */
  tenantScope: string | null;
  stuckHolds: StuckHoldsSummary;
  lostReleases: LostReleaseCounts;
  holdMismatches: HoldMismatchCounts;
  outboxes: OutboxStats[];
  consumers: ConsumerGroupStatus[] | null;
  dlq: DlqGroupSize[] | null;
  kafkaError: string | null;
  delisted: DelistedBacklog;
  jobs: JobStatus[];
  /** the findings the reconciliation page lists (same table, same scope), counted; null before the job's first cycle */
  reconciliation: { at: Date; total: number; byKind: Record<string, number> } | null;
  alerts: Alert[];
  thresholds: typeof THRESHOLDS;
  trends: Record<string, TrendPoint[]>;
  /** where the dashboard's figures were read, and how far behind the primary that was */
  replication: ReplicationStatus;
}

export interface ReplicationStatus {
  /** 'replica': DATABASE_READ_URL (a standby); 'primary': no read replica configured, or it is not in recovery */
  readFrom: 'primary' | 'replica';
  /** seconds of primary commits the replica has not replayed yet (0 when it has replayed all it received); null on the primary */
  lagSeconds: number | null;
}

/** Names of the sampled series (also the keys of `trends`). */
export const SERIES = {
  holdsPastGrace: 'holds.past_grace',
  holdsInGrace: 'holds.in_grace',
  lostReleasesHour: 'releases.lost_last_hour',
  mismatchesHour: 'hold_mismatches.last_hour',
  outboxPending: (o: string) => `outbox.pending.${o}`,
  consumerLag: (g: string) => `consumer.lag.${g}`,
  dlqSize: (g: string) => `dlq.size.${g}`,
  delistedAll: 'delisted.all',
  delistedPastCutoff: 'delisted.past_cutoff',
  reconciliationMismatches: 'reconciliation.mismatches',
} as const;

const TENANT_SERIES = new Set<string>([SERIES.holdsPastGrace, SERIES.holdsInGrace, SERIES.lostReleasesHour, SERIES.mismatchesHour, SERIES.reconciliationMismatches]);

export interface OverviewDeps {
  database: Database;
  /** the read replica (DATABASE_READ_URL): every figure is read there; only the samples are written to `database` */
  readDatabase?: Database;
  env: DashboardEnv;
  logger?: Logger;
}

export async function getOverview(
  deps: OverviewDeps,
  input: { now?: Date; scope: TenantScope; sample?: boolean; trendWindowMs?: number; extraSamples?: Samples },
): Promise<Overview> {
  const { db } = deps.readDatabase ?? deps.database;
  const now = input.now ?? new Date();
  // the broker's figures are asked for while the database's are read (the admin calls are round trips
  // to Kafka, not work here): the overview takes the longer of the two, not their sum
  const kafka = kafkaFigures(deps, db, now);
  const [stuckHolds, lostReleases, holdMismatches, outboxes, delisted, runs, jobsRecordedSince, controls, report, replication] = await Promise.all([
    getStuckHoldsSummary(db, { now, graceMs: deps.env.HOLD_EXPIRATION_GRACE_MS, scope: input.scope }),
    getLostReleaseCounts(db, { now, scope: input.scope }),
    getHoldMismatchCounts(db, { now, scope: input.scope }),
    getOutboxStats(db, { now }),
    getDelistedBacklog(db, { cutoff: new Date(now.getTime() - deps.env.DELISTED_RETENTION_PERIOD_MS) }),
    lastJobRuns(db),
    firstJobRunAt(db),
    jobControls(db),
    // the overview counts exactly what the reconciliation page lists: the same maintained findings
    findingCounts(db, { scope: input.scope }),
    replicationStatus(deps.readDatabase ?? deps.database),
  ]);

  const { consumers, dlq, kafkaError } = await kafka;

  const jobs: JobStatus[] = registeredJobNames().map((name) => ({
    name,
    paused: controls.get(name)?.paused ?? false,
    lastRun: runs.get(name)?.last ?? null,
    lastSucceededAt: runs.get(name)?.lastSucceededAt ?? null,
  }));
  const reconciliation = report;

  const delistedTotal = delisted.propertyObjects.all + delisted.projects.all;
  const samples: Samples = {
    [SERIES.holdsPastGrace]: stuckHolds.pastGrace,
    [SERIES.holdsInGrace]: stuckHolds.inGrace,
    [SERIES.lostReleasesHour]: lostReleases.lastHour,
    [SERIES.mismatchesHour]: holdMismatches.lastHour,
    [SERIES.delistedAll]: delistedTotal,
    [SERIES.delistedPastCutoff]: delisted.propertyObjects.pastCutoff + delisted.projects.pastCutoff,
  };
  for (const o of outboxes) samples[SERIES.outboxPending(o.outbox)] = o.pending;
  for (const c of consumers ?? []) samples[SERIES.consumerLag(c.group)] = c.lag;
  for (const d of dlq ?? []) samples[SERIES.dlqSize(d.group)] = d.size;
  if (reconciliation) samples[SERIES.reconciliationMismatches] = reconciliation.total;
  Object.assign(samples, input.extraSamples ?? {});
  // only cross-tenant figures make history: a tenant-scoped read would mix scopes in one series
  if (input.sample !== false && input.scope === null) {
    await recordSamples(deps.database.db, samples, now).catch((e) => deps.logger?.warn({ err: { message: String(e) } }, 'ops overview: could not record samples'));
  }

  const names = Object.keys(samples).filter((n) => input.scope === null || !TENANT_SERIES.has(n));
  const trends = await readTrends(db, names, new Date(now.getTime() - (input.trendWindowMs ?? 24 * 3600_000)), 60);
  const delistedDaily = (await dailyClosingValues(db, SERIES.delistedAll, THRESHOLDS.delistedGrowingDays + 2, now)).map((d) => d.value);

  const alerts = evaluateAlerts({
    now,
    holdsPastGrace: stuckHolds.pastGrace,
    lostReleasesLastHour: lostReleases.lastHour,
    holdMismatchesLastHour: holdMismatches.lastHour,
    outboxes,
    consumers,
    dlq,
    kafkaError,
    retentionLastSucceededAt: runs.get('delisted-retention')?.lastSucceededAt ?? null,
    jobsRecordedSince,
    delistedDaily,
    jobs: jobs.map((j) => ({ name: j.name, lastStatus: j.lastRun?.status ?? null, paused: j.paused })),
    reconciliationMismatches: reconciliation?.total ?? null,
  });

  return {
    asOf: now, tenantScope: input.scope, stuckHolds, lostReleases, holdMismatches, outboxes, consumers, dlq, kafkaError, delisted,
    jobs, reconciliation, alerts, thresholds: THRESHOLDS, trends, replication,
  };
}

/** Consumer lag (with the estimated age of the oldest unprocessed message) and DLQ sizes, or why Kafka did not answer. */
async function kafkaFigures(deps: OverviewDeps, db: OverviewDeps['database']['db'], now: Date): Promise<{ consumers: ConsumerGroupStatus[] | null; dlq: DlqGroupSize[] | null; kafkaError: string | null }> {
  try {
    const [lag, dlqOffsets] = await Promise.all([consumerLag(deps.env), dlqTopicOffsets(deps.env)]);
    const groups = new Map(consumerGroups().map((g) => [g.group, g]));
    const consumers = await Promise.all(lag.map(async (l) => ({
      ...l,
      estimatedLagMs: l.lag > 0 ? await estimateConsumerTimeLag(db, { now, group: l.group, inbox: groups.get(l.group)!.inbox, topics: groups.get(l.group)!.topics }) : null,
    })));
    // getDlqSizes records what it finds on the DLQ topics: a write, so on the primary
    const dlq = await getDlqSizes(deps.database.db, deps.env, dlqOffsets);
    return { consumers, dlq, kafkaError: null };
  } catch (e) {
    const kafkaError = e instanceof Error ? e.message : String(e);
    deps.logger?.warn({ err: { message: kafkaError } }, 'ops overview: Kafka admin unavailable');
    return { consumers: null, dlq: null, kafkaError };
  }
}

/**
 * Whether `database` is a standby and how far behind: the age of the last primary commit it replayed,
 * counted only while WAL it has received is still waiting to be replayed (an idle primary sends no
 * commits, and a replica that replayed everything is not behind however old its last commit is).
 */
export async function replicationStatus(database: Database): Promise<ReplicationStatus> {
  const [r] = await database.sql<{ replica: boolean; lag: number | null }[]>`
    SELECT pg_is_in_recovery() AS replica,
           CASE WHEN NOT pg_is_in_recovery() THEN NULL
                WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
                ELSE greatest(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp()))::float8 END AS lag`;
  return r!.replica ? { readFrom: 'replica', lagSeconds: r!.lag === null ? null : Math.round(r!.lag * 10) / 10 } : { readFrom: 'primary', lagSeconds: null };
}
