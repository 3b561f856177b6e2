import { z } from 'zod';
import { storableDate } from '../../platform/date-input';
import { tenantScope } from '../../auth/actor';
import { jobNameInput } from '../../platform/registry';
import { readDatabaseOf } from '../../trpc/context';
import { commandProcedure } from '../../trpc/command-procedure';
import { roleProcedure, router } from '../../trpc/init';
import { CRM_BOOKING_CHOICES, releaseHoldChecked, releaseHoldOutput, releaseLogFields, repairedBy } from '../booking-repairs';
import {
  pauseJobInput, repairDivergence, repairDivergenceInput, repairDivergenceOutput, repairReconciliation, repairReconciliationInput, repairReconciliationOutput,
  resumeJobInput, runJobNow, setJobPaused, setJobPausedOutput,
} from './commands';
import { discardDlqMessage, discardDlqMessages, requeueDlqMessage, requeueDlqMessages } from './dlq';
import { listJobs } from './jobs';
import { getOverview } from './overview';
import { STUCK_HOLD_SORTS } from './hold-queries';
import { JOB_RUN_STATUSES, listJobRuns } from './job-queries';
import { reconciliationPageOutput } from '../reconciliation-findings';
import { catalogView, dlqView, holdReleasesView, messagingView, reconciliationView, stuckHoldsView } from './views';

/**
 * ops.dashboard: the operations dashboard. Reads for ops, PIN manager and viewer (a tenant-scoped viewer
 * sees its tenant's rows; infrastructure figures are global); every action is for ops only and
 * answers FORBIDDEN to anyone else.
 */
const readProcedure = roleProcedure('ops', 'pin_manager', 'viewer');
const actProcedure = roleProcedure('ops');
/** an action that changes state in one transaction: a command, served and logged like every command */
const opsAction = (name: string) => ({ name, roles: ['ops'] as const, logMessage: 'ops action applied' });

const reason = z.string().trim().min(1).max(500);
const optionalReason = z.string().trim().max(500).optional();
const releaseHoldActionInput = z.object({ propertyObjectId: z.uuid(), reason, crmBooking: z.enum(CRM_BOOKING_CHOICES).optional() });
const jobLogFields = (r: { job: string; paused: boolean }) => ({ job: r.job, paused: r.paused });
const dlqRef = { topic: z.string().min(1).max(300), partition: z.number().int().min(0), offset: z.number().int().min(0) };
// a selection of records; the same record twice is one decision (refused the second time)
const dlqRefs = z.array(z.object(dlqRef)).min(1).max(100);

export const opsDashboardRouter = router({
  overview: readProcedure.query(({ ctx }) =>
    getOverview({ database: ctx.database, readDatabase: readDatabaseOf(ctx), env: ctx.env, logger: ctx.logger }, { scope: tenantScope(ctx.actor) })),

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
    .query(({ ctx, input }) => stuckHoldsView({ ...ctx, database: readDatabaseOf(ctx) }, { scope: tenantScope(ctx.actor), filter: { ...input, number: input.number || undefined } })),

  holdReleases: readProcedure
    .input(z.object({
      source: z.enum(['ExpirationJob', 'Manual', 'all']).default('ExpirationJob'),
      rangeHours: z.number().int().min(1).max(24 * 90).default(24 * 7),
    }).default({ source: 'ExpirationJob', rangeHours: 24 * 7 }))
    .query(({ ctx, input }) => holdReleasesView({ ...ctx, database: readDatabaseOf(ctx) }, { scope: tenantScope(ctx.actor), ...input })),

  jobs: readProcedure.query(({ ctx }) => listJobs(ctx.database.db, ctx.env)),

  jobRuns: readProcedure
    .input(z.object({
      job: jobNameInput,
      statuses: z.array(z.enum(JOB_RUN_STATUSES)).max(4).optional(),
      from: storableDate().optional(),
      to: storableDate().optional(),
      beforeId: z.number().int().positive().optional(),
      limit: z.number().int().min(1).max(500).default(100),
    }))
    .query(({ ctx, input }) => listJobRuns(ctx.database.db, input)),

  messaging: readProcedure.query(({ ctx }) => messagingView(ctx, { scope: tenantScope(ctx.actor) })),

  dlqMessages: readProcedure
    .input(z.object({ group: z.string().max(200).optional(), includeDecided: z.boolean().default(false) }).default({ includeDecided: false }))
    .query(({ ctx, input }) => dlqView(ctx, { scope: tenantScope(ctx.actor), ...input })),

  catalog: readProcedure.query(({ ctx }) => catalogView(ctx)),

  reconciliation: readProcedure.output(reconciliationPageOutput).query(({ ctx }) => reconciliationView(ctx, { scope: tenantScope(ctx.actor) })),

  /* ---- actions (ops only) ---------------------------------------------------------------- */

  releaseHold: commandProcedure({
    ...opsAction('ops.releaseHold'), input: releaseHoldActionInput, output: releaseHoldOutput,
    handler: (tx, input, cctx) => releaseHoldChecked(tx, { ...input, ...repairedBy(cctx) }), logFields: releaseLogFields,
  }),

  runJobNow: actProcedure
    .input(z.object({ job: jobNameInput, reason: optionalReason }))
    .mutation(({ ctx, input }) =>
      runJobNow({ database: ctx.database, env: ctx.env, logger: ctx.logger }, { job: input.job, actor: ctx.actor, reason: input.reason, correlationId: ctx.correlationId })),

  pauseJob: commandProcedure({
    ...opsAction('ops.pauseJob'), input: pauseJobInput, output: setJobPausedOutput,
    handler: (tx, input, { actor, now }) => setJobPaused(tx, { ...input, paused: true, actor, now }), logFields: jobLogFields,
  }),
  resumeJob: commandProcedure({
    ...opsAction('ops.resumeJob'), input: resumeJobInput, output: setJobPausedOutput,
    handler: (tx, input, { actor, now }) => setJobPaused(tx, { ...input, paused: false, actor, now }), logFields: jobLogFields,
  }),

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

  repairReconciliation: commandProcedure({
    ...opsAction('ops.repairReconciliation'), input: repairReconciliationInput, output: repairReconciliationOutput,
    handler: (tx, input, cctx) => repairReconciliation(tx, { ...input, ...repairedBy(cctx) }),
    logFields: (r) => ({ action: r.action, propertyObjectId: r.propertyObjectId, messageId: r.messageId, bookingId: r.action === 'republish' ? r.bookingId : r.crmBooking?.bookingId ?? null }),
  }),

  /** The two repairs of a divergence (object Free in chessboard, crm booking active): hold it again, or cancel the booking. */
  repairDivergence: commandProcedure({
    ...opsAction('ops.repairDivergence'), input: repairDivergenceInput, output: repairDivergenceOutput,
    handler: (tx, input, cctx) => repairDivergence(tx, { ...input, ...repairedBy(cctx) }),
    logFields: (r) => ({ action: r.action, bookingId: r.bookingId, propertyObjectId: r.propertyObjectId, objectStatus: r.objectStatus, bookingStatus: r.bookingStatus }),
  }),
});
