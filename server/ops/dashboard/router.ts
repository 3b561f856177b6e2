import { z } from 'zod';
import { tenantScope } from '../../auth/actor';
import { getDelistedBacklog, getNextRetentionCandidates } from '../../catalog/queries';
import { JOB_NAMES } from '../../platform/jobs/types';
import { roleProcedure, router } from '../../trpc/init';
import { cancelBookingInRepair, CRM_BOOKING_CHOICES, reholdBooking } from '../booking-repairs';
import { republishBookingEvent, releaseForReconciliation, runReconciliation, setReconciliationGauge } from '../reconciliation';
import { releaseStuckHold, runJobNow, setJobPaused } from './commands';
import { discardDlqMessage, discardDlqMessages, getDlqSizes, listDlqMessages, requeueDlqMessage, requeueDlqMessages, syncDlqThrottled } from './dlq';
import { listJobs } from './jobs';
import { consumerGroups, consumerLag } from './kafka-admin';
import { readTrends } from './metric-samples';
import { getOverview, SERIES, type ConsumerGroupStatus } from './overview';
import {
  estimateConsumerTimeLag, getOutboxStats, holdReleaseHistogram, listFailingOutboxRows, listHoldReleases, listJobRuns,
  listRetentionRuns, listStuckHolds, JOB_RUN_STATUSES, OUTBOX_NAMES, retentionLockContention, STUCK_HOLD_SORTS,
} from './queries';

/**
 * ops.dashboard: the operations dashboard. Reads for ops, PIN manager and viewer (a tenant-scoped viewer
 * sees its tenant's rows; infrastructure figures are global); every action is for ops only and
 * answers FORBIDDEN to anyone else.
 */
const readProcedure = roleProcedure('ops', 'pin_manager', 'viewer');
const actProcedure = roleProcedure('ops');

const reason = z.string().trim().min(1).max(500);
const optionalReason = z.string().trim().max(500).optional();
const HOUR = 3600_000;
const dlqRef = { topic: z.string().min(1).max(300), partition: z.number().int().min(0), offset: z.number().int().min(0) };
// a selection of records; the same record twice is one decision (refused the second time)
const dlqRefs = z.array(z.object(dlqRef)).min(1).max(100);

export const opsDashboardRouter = router({
  overview: readProcedure.query(({ ctx }) =>
    getOverview({ database: ctx.database, env: ctx.env, logger: ctx.logger }, { scope: tenantScope(ctx.actor) })),

  stuckHolds: readProcedure
    .input(z.object({
      phase: z.enum(['all', 'inGrace', 'pastGrace']).default('all'),
      status: z.enum(['Reserved', 'Booked']).optional(),
      tenantId: z.uuid().optional(),
      projectId: z.uuid().optional(),
      number: z.string().trim().max(20).optional(),
      crmActive: z.enum(['yes', 'no']).optional(),
      sort: z.enum(STUCK_HOLD_SORTS).default('overdue'),
      dir: z.enum(['asc', 'desc']).default('desc'),
    }).default({ phase: 'all', sort: 'overdue', dir: 'desc' }))
    .query(async ({ ctx, input }) => {
      const now = new Date();
      const rows = await listStuckHolds(ctx.database.db, { now, graceMs: ctx.env.HOLD_EXPIRATION_GRACE_MS, scope: tenantScope(ctx.actor), filter: { ...input, number: input.number || undefined } });
      return { asOf: now, graceMs: ctx.env.HOLD_EXPIRATION_GRACE_MS, rows };
    }),

  holdReleases: readProcedure
    .input(z.object({
      source: z.enum(['ExpirationJob', 'Manual', 'all']).default('ExpirationJob'),
      rangeHours: z.number().int().min(1).max(24 * 90).default(24 * 7),
    }).default({ source: 'ExpirationJob', rangeHours: 24 * 7 }))
    .query(async ({ ctx, input }) => {
      const now = new Date();
      const scope = tenantScope(ctx.actor);
      const [rows, histogram] = await Promise.all([
        listHoldReleases(ctx.database.db, { now, scope, source: input.source, sinceMs: input.rangeHours * HOUR }),
        holdReleaseHistogram(ctx.database.db, { now, scope, rangeMs: input.rangeHours * HOUR }),
      ]);
      return { asOf: now, rows, histogram };
    }),

  jobs: readProcedure.query(({ ctx }) => listJobs(ctx.database.db, ctx.env)),

  jobRuns: readProcedure
    .input(z.object({
      job: z.enum(JOB_NAMES),
      statuses: z.array(z.enum(JOB_RUN_STATUSES)).max(4).optional(),
      from: z.date().optional(),
      to: z.date().optional(),
      beforeId: z.number().int().positive().optional(),
      limit: z.number().int().min(1).max(500).default(100),
    }))
    .query(({ ctx, input }) => listJobRuns(ctx.database.db, input)),

  messaging: readProcedure.query(async ({ ctx }) => {
    const now = new Date();
    const { db } = ctx.database;
    const outboxes = await getOutboxStats(db, { now });
    const failing = (await Promise.all(OUTBOX_NAMES.map((outbox) => listFailingOutboxRows(db, { outbox, limit: 50, scope: tenantScope(ctx.actor) })))).flat();
    let consumers: ConsumerGroupStatus[] | null = null;
    let kafkaError: string | null = null;
    let dlq = null;
    try {
      const groups = new Map(consumerGroups().map((g) => [g.group, g]));
      consumers = await Promise.all((await consumerLag(ctx.env)).map(async (l) => ({
        ...l,
        estimatedLagMs: l.lag > 0 ? await estimateConsumerTimeLag(db, { now, group: l.group, inbox: groups.get(l.group)!.inbox, topics: groups.get(l.group)!.topics }) : null,
      })));
      dlq = await getDlqSizes(db, ctx.env);
    } catch (e) {
      kafkaError = e instanceof Error ? e.message : String(e);
    }
    return { asOf: now, outboxes, failing, consumers, dlq, kafkaError };
  }),

  dlqMessages: readProcedure
    .input(z.object({ group: z.string().max(200).optional(), includeDecided: z.boolean().default(false) }).default({ includeDecided: false }))
    .query(async ({ ctx, input }) => {
      let syncError: string | null = null;
      try {
        await syncDlqThrottled(ctx.database.db, ctx.env, ctx.logger);
      } catch (e) {
        syncError = e instanceof Error ? e.message : String(e);
      }
      const rows = await listDlqMessages(ctx.database.db, { scope: tenantScope(ctx.actor), group: input.group, includeDecided: input.includeDecided });
      return { rows, syncError };
    }),

  catalog: readProcedure.query(async ({ ctx }) => {
    const now = new Date();
    const { db } = ctx.database;
    const cutoff = new Date(now.getTime() - ctx.env.DELISTED_RETENTION_PERIOD_MS);
    const [backlog, candidates, runs, contention, trends] = await Promise.all([
      getDelistedBacklog(db, { cutoff }),
      getNextRetentionCandidates(db, { cutoff, batchSize: ctx.env.DELISTED_RETENTION_BATCH_SIZE, maxBatchesPerRun: ctx.env.DELISTED_RETENTION_MAX_BATCHES_PER_RUN }),
      listRetentionRuns(db, { limit: 30 }),
      retentionLockContention(db, { now, sinceMs: 30 * 24 * HOUR }),
      readTrends(db, [SERIES.delistedAll, SERIES.delistedPastCutoff], new Date(now.getTime() - 30 * 24 * HOUR), 120),
    ]);
    return {
      asOf: now, backlog, candidates, runs, contention, trends,
      settings: {
        retentionPeriodMs: ctx.env.DELISTED_RETENTION_PERIOD_MS, batchSize: ctx.env.DELISTED_RETENTION_BATCH_SIZE,
        maxBatchesPerRun: ctx.env.DELISTED_RETENTION_MAX_BATCHES_PER_RUN, maxRunDurationMs: ctx.env.DELISTED_RETENTION_MAX_RUN_DURATION_MS,
      },
    };
  }),

  reconciliation: readProcedure.query(async ({ ctx }) => {
    let lag: number | null = null;
    try {
      lag = (await consumerLag(ctx.env)).find((g) => g.group === 'chessboard.crm-property-object-status')?.lag ?? 0;
    } catch {
      // without Kafka the causes come from the database only
    }
    const scope = tenantScope(ctx.actor);
    const report = await runReconciliation(ctx.database.db, { now: new Date(), scope, consumerLag: lag });
    // a cross-tenant report is the whole truth: keep this process's gauge current too
    if (scope === null) setReconciliationGauge(report.counts);
    return report;
  }),

  /* ---- actions (ops only) ---------------------------------------------------------------- */

  releaseHold: actProcedure
    .input(z.object({ propertyObjectId: z.uuid(), reason, crmBooking: z.enum(CRM_BOOKING_CHOICES).optional() }))
    .mutation(({ ctx, input }) =>
      ctx.database.db.transaction((tx) => releaseStuckHold(tx, { ...input, actor: ctx.actor, correlationId: ctx.correlationId }))),

  runJobNow: actProcedure
    .input(z.object({ job: z.enum(JOB_NAMES), reason: optionalReason }))
    .mutation(({ ctx, input }) =>
      runJobNow({ database: ctx.database, env: ctx.env, logger: ctx.logger }, { job: input.job, actor: ctx.actor, reason: input.reason, correlationId: ctx.correlationId })),

  pauseJob: actProcedure
    .input(z.object({ job: z.enum(JOB_NAMES), reason }))
    .mutation(({ ctx, input }) => ctx.database.db.transaction((tx) => setJobPaused(tx, { ...input, paused: true, actor: ctx.actor }))),

  resumeJob: actProcedure
    .input(z.object({ job: z.enum(JOB_NAMES), reason: optionalReason }))
    .mutation(({ ctx, input }) => ctx.database.db.transaction((tx) => setJobPaused(tx, { ...input, paused: false, actor: ctx.actor }))),

  requeueDlq: actProcedure
    .input(z.object({ ...dlqRef, reason }))
    .mutation(({ ctx, input }) => requeueDlqMessage(ctx.database.db, ctx.env, { ...input, actor: ctx.actor, scope: tenantScope(ctx.actor) }, ctx.logger)),

  discardDlq: actProcedure
    .input(z.object({ ...dlqRef, reason }))
    .mutation(({ ctx, input }) => discardDlqMessage(ctx.database.db, { ...input, actor: ctx.actor, scope: tenantScope(ctx.actor) })),

  // bulk decisions: up to 100 records, one reason; each record is decided (or refused) on its own
  requeueDlqMany: actProcedure
    .input(z.object({ refs: dlqRefs, reason }))
    .mutation(({ ctx, input }) => requeueDlqMessages(ctx.database.db, ctx.env, { ...input, actor: ctx.actor, scope: tenantScope(ctx.actor) }, ctx.logger)),

  discardDlqMany: actProcedure
    .input(z.object({ refs: dlqRefs, reason }))
    .mutation(({ ctx, input }) => discardDlqMessages(ctx.database.db, { ...input, actor: ctx.actor, scope: tenantScope(ctx.actor) })),

  repairReconciliation: actProcedure
    .input(z.discriminatedUnion('action', [
      z.object({ action: z.literal('republish'), bookingId: z.uuid(), reason }),
      z.object({ action: z.literal('manual_release'), propertyObjectId: z.uuid(), reason, crmBooking: z.enum(CRM_BOOKING_CHOICES).optional() }),
    ]))
    .mutation(({ ctx, input }) =>
      ctx.database.db.transaction(async (tx) => {
        const by = { reason: input.reason, actor: ctx.actor, correlationId: ctx.correlationId };
        if (input.action === 'republish') {
          return { action: input.action, ...(await republishBookingEvent(tx, { bookingId: input.bookingId, ...by })) };
        }
        return { action: input.action, ...(await releaseForReconciliation(tx, { propertyObjectId: input.propertyObjectId, crmBooking: input.crmBooking, ...by })) };
      })),

  /** The two repairs of a divergence (object Free in chessboard, crm booking active): hold it again, or cancel the booking. */
  repairDivergence: actProcedure
    .input(z.object({ action: z.enum(['rehold', 'cancel_booking']), bookingId: z.uuid(), reason }))
    .mutation(({ ctx, input }) =>
      ctx.database.db.transaction(async (tx) => {
        const by = { bookingId: input.bookingId, reason: input.reason, actor: ctx.actor, correlationId: ctx.correlationId };
        if (input.action === 'rehold') {
          const r = await reholdBooking(tx, by);
          return { action: input.action, bookingId: r.bookingId, propertyObjectId: r.propertyObjectId, objectStatus: r.toStatus, bookingStatus: null };
        }
        const r = await cancelBookingInRepair(tx, by);
        return { action: input.action, bookingId: r.bookingId, propertyObjectId: r.propertyObjectId, objectStatus: null, bookingStatus: r.bookingStatus };
      })),
});
