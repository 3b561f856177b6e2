import { z } from 'zod';
import type { Actor } from '../../auth/actor';
import { statusChangeOutput } from '../../chessboard/commands';
import { bookingOutput } from '../../crm/commands/output';
import { jobNameInput, registeredJobs } from '../../platform/registry';
import type { Database, Tx } from '../../platform/db';
import type { PlatformEnv } from '../../platform/env';
import { AppError } from '../../platform/errors';
import { recordAudit } from '../../platform/audit';
import { runJobCycle, setJobControl, type JobRunResult } from '../../platform/jobs/run-log';
import type { JobName } from '../../platform/jobs/types';
import type { Logger } from '../../platform/logger';
import { cancelBookingInRepair, CRM_BOOKING_CHOICES, reholdBooking, releaseHoldChecked, releaseHoldOutput, type CrmBookingChoice } from '../booking-repairs';
import { republishBookingEvent } from '../reconciliation';
import { recheckAfterRepair } from '../reconciliation-findings';
import { opsKafka } from './kafka-admin';

/**
 * Ops actions of the dashboard. Each writes ops.audit_log (who, what, why). The safety rules of the
 * jobs (advisory locks, FOR UPDATE SKIP LOCKED) live inside the jobs, so a cycle started here behaves
 * exactly like a scheduled one, whichever worker instance is running at the same time.
 */

export const OPS_ERRORS = {
  JOB_ALREADY_RUNNING: 'OPS_JOB_ALREADY_RUNNING',
} as const;

export interface OpsDeps {
  database: Database;
  env: PlatformEnv;
  logger: Logger;
}

const g = globalThis as unknown as { __pinOpsManualRuns?: Set<string> };
/** manual cycles in flight in this process (one per job; another process's cycle is handled by the job's own locks) */
const manualRuns = (g.__pinOpsManualRuns ??= new Set());

/**
 * "Run now": one cycle of the job in this (web) process via runJobCycle (trigger 'manual'), recorded in
 * ops.job_runs like any cycle. A paused job can still be run by hand: pausing stops the schedule only.
 */
export async function runJobNow(
  deps: OpsDeps,
  input: { job: JobName; actor: Actor; reason?: string | null; correlationId?: string },
): Promise<JobRunResult> {
  if (manualRuns.has(input.job)) {
    throw new AppError(OPS_ERRORS.JOB_ALREADY_RUNNING, 'CONFLICT', `a manual run of ${input.job} is already in progress`);
  }
  manualRuns.add(input.job);
  // a fresh definition per run: stateful jobs (the relay's producer and advisory-lock connection) are closed after it
  const job = registeredJobs()[input.job];
  const abort = new AbortController();
  try {
    const result = await runJobCycle(job, {
      database: deps.database, env: deps.env, logger: deps.logger.child({ actorId: input.actor.userId }),
      kafka: opsKafka(deps.env, deps.logger), signal: abort.signal,
    }, 'manual');
    await recordAudit(deps.database.db, {
      actor: input.actor, action: 'ops.job.run-now', targetType: 'Job', targetId: input.job, reason: input.reason?.trim() || null,
      details: { runId: result.runId, status: result.status, error: result.error ?? null, correlationId: input.correlationId ?? null },
    });
    return result;
  } finally {
    manualRuns.delete(input.job);
    await job.close?.().catch(() => {});
  }
}

const reason = z.string().trim().min(1).max(500);
const optionalReason = z.string().trim().max(500).optional();

export const pauseJobInput = z.object({ job: jobNameInput, reason });
export const resumeJobInput = z.object({ job: jobNameInput, reason: optionalReason });
export const setJobPausedOutput = z.object({ job: z.string(), paused: z.boolean(), changedAt: z.date() });

/** Pause / resume: persisted in ops.job_controls, obeyed by the scheduler of every worker instance (isJobPaused). */
export async function setJobPaused(
  tx: Tx,
  input: { job: JobName; paused: boolean; actor: Actor; reason?: string | null; now?: Date },
): Promise<z.infer<typeof setJobPausedOutput>> {
  const now = input.now ?? new Date();
  const reason = input.reason?.trim() || null;
  await setJobControl(tx, { job: input.job, paused: input.paused, changedBy: input.actor.userId, changedAt: now, reason });
  await recordAudit(tx, { at: now, actor: input.actor, action: input.paused ? 'ops.job.pause' : 'ops.job.resume', targetType: 'Job', targetId: input.job, reason });
  return { job: input.job, paused: input.paused, changedAt: now };
}

export const repairReconciliationInput = z.discriminatedUnion('action', [
  z.object({ action: z.literal('republish'), bookingId: z.uuid(), reason }),
  z.object({ action: z.literal('manual_release'), propertyObjectId: z.uuid(), reason, crmBooking: z.enum(CRM_BOOKING_CHOICES).optional() }),
]);
/** the event repeated, or the release with what became of crm's booking */
export const repairReconciliationOutput = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('republish'), bookingId: z.guid(), propertyObjectId: z.guid(), topic: z.string(), messageId: z.guid(), bookingVersion: z.number().int(),
  }),
  releaseHoldOutput.extend({ action: z.literal('manual_release') }),
]);

/** A reconciliation finding's repair: repeat the booking's current event (crm), or release the hold (runbook, checked). */
export async function repairReconciliation(
  tx: Tx,
  input: ({ action: 'republish'; bookingId: string } | { action: 'manual_release'; propertyObjectId: string; crmBooking?: CrmBookingChoice })
    & { reason: string; actor: Actor; correlationId?: string },
): Promise<z.infer<typeof repairReconciliationOutput>> {
  const by = { reason: input.reason, actor: input.actor, correlationId: input.correlationId };
  if (input.action === 'republish') {
    const now = new Date();
    const republished = await republishBookingEvent(tx, { bookingId: input.bookingId, now, ...by });
    // the event is in flight now: the finding leaves the page until a cycle past the settle window judges it again
    await recheckAfterRepair(tx, { now, bookingIds: [republished.bookingId], objectIds: [republished.propertyObjectId], correlationId: input.correlationId });
    return { action: input.action, ...republished };
  }
  return { action: input.action, ...(await releaseHoldChecked(tx, { propertyObjectId: input.propertyObjectId, crmBooking: input.crmBooking, ...by })) };
}

export const repairDivergenceInput = z.object({ action: z.enum(['rehold', 'cancel_booking']), bookingId: z.uuid(), reason });
/** the object's status after a re-hold, or the booking's after its cancel */
export const repairDivergenceOutput = z.discriminatedUnion('action', [
  z.object({ action: z.literal('rehold'), bookingId: z.guid(), propertyObjectId: z.guid(), objectStatus: statusChangeOutput.shape.toStatus, bookingStatus: z.null() }),
  z.object({ action: z.literal('cancel_booking'), bookingId: z.guid(), propertyObjectId: z.guid(), objectStatus: z.null(), bookingStatus: bookingOutput.shape.status }),
]);

/** The two repairs of a divergence (object Free in chessboard, crm booking active): hold it again, or cancel the booking. */
export async function repairDivergence(
  tx: Tx,
  input: { action: 'rehold' | 'cancel_booking'; bookingId: string; reason: string; actor: Actor; correlationId?: string },
): Promise<z.infer<typeof repairDivergenceOutput>> {
  const by = { bookingId: input.bookingId, reason: input.reason, actor: input.actor, correlationId: input.correlationId };
  if (input.action === 'rehold') {
    const r = await reholdBooking(tx, by);
    return { action: input.action, bookingId: r.bookingId, propertyObjectId: r.propertyObjectId, objectStatus: r.toStatus, bookingStatus: null };
  }
  const r = await cancelBookingInRepair(tx, by);
  return { action: input.action, bookingId: r.bookingId, propertyObjectId: r.propertyObjectId, objectStatus: null, bookingStatus: r.bookingStatus };
}
