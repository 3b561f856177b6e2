import { and, asc, eq, gt, isNotNull, lte, or, sql, isNull, ne } from 'drizzle-orm';
import type { PlatformEnv } from '../platform/env';
import type { JobContext, JobDefinition, JobSummary } from '../platform/jobs/types';
import type { NotificationsEnv } from './env';
import { deadlineSoonMessageId, describeBooking, insertNotifications } from './booking-events';
import { notificationsCreated } from './metrics';
import { holdDeadlines } from './schema';

type NotificationsJobEnv = PlatformEnv & NotificationsEnv;

export interface DeadlineSoonSummary extends JobSummary {
  HoldsNotified: number;
  NotificationsCreated: number;
  SkippedLockedCount: number;
}

const HOLDS_PER_CYCLE = 500;

/**
 * Job `notifications-deadline-soon`: a DeadlineSoon notification to the deal's participants when an
 * active reserve or booking has less than NOTIFICATIONS_DEADLINE_SOON_MINUTES left. Reads only
 * notifications' own projection of the deadlines (hold_deadlines, fed by crm's events), never crm's
 * tables. Exactly once per deadline: the hold row remembers the deadline it notified for (an
 * extension is a new deadline and may notify again), the notification's message id is derived from
 * (booking, deadline), and rows are locked with SKIP LOCKED so concurrent workers split them.
 *
 * The frame (summary interface, per-cycle limit, a JobDefinition whose run computes `at` from opts.now)
 * is every job's, by platform/jobs/types; what repeats is that contract's shape, not logic to share.
 */
export function createDeadlineSoonJob(opts: { now?: () => Date } = {}): JobDefinition<NotificationsJobEnv> {
  return {
    name: 'notifications-deadline-soon',
    schedule: (env) => ({ cron: env.NOTIFICATIONS_DEADLINE_SOON_SCHEDULE, timezone: 'UTC' }),
    async run(ctx: JobContext<NotificationsJobEnv>): Promise<DeadlineSoonSummary> {
      const at = opts.now?.() ?? new Date();
      const horizon = new Date(at.getTime() + ctx.env.NOTIFICATIONS_DEADLINE_SOON_MINUTES * 60_000);
      const summary: DeadlineSoonSummary = { HoldsNotified: 0, NotificationsCreated: 0, SkippedLockedCount: 0 };
      const due = and(
        eq(holdDeadlines.ended, false), isNotNull(holdDeadlines.deadline),
        gt(holdDeadlines.deadline, at), lte(holdDeadlines.deadline, horizon),
        or(isNull(holdDeadlines.soonNotifiedDeadline), ne(holdDeadlines.soonNotifiedDeadline, holdDeadlines.deadline)),
      );
      await ctx.database.db.transaction(async (tx) => {
        const [{ n }] = await tx.select({ n: sql<number>`count(*)::int` }).from(holdDeadlines).where(due);
        const holds = await tx.select().from(holdDeadlines).where(due).orderBy(asc(holdDeadlines.deadline)).limit(HOLDS_PER_CYCLE)
          .for('update', { skipLocked: true });
        summary.SkippedLockedCount = Math.max(0, Math.min(n, HOLDS_PER_CYCLE) - holds.length);
        for (const h of holds) {
          const deadline = h.deadline!;
          // the flat and the deal only: nobody acted, time did
          const { objectNumber, dealTitle } = await describeBooking(tx, { tenantId: h.tenantId, dealId: h.dealId, bookingId: null, propertyObjectId: h.propertyObjectId, bookingVersion: null });
          const created = await insertNotifications(tx, {
            messageId: deadlineSoonMessageId(h.bookingId, deadline), tenantId: h.tenantId, type: 'DeadlineSoon', bookingId: h.bookingId,
            dealId: h.dealId, data: { phase: h.phase, deadline: deadline.toISOString(), propertyObjectId: h.propertyObjectId, objectNumber, dealTitle }, occurredAt: at, createdBy: h.createdBy, investorId: h.investorId,
          });
          await tx.update(holdDeadlines).set({ soonNotifiedDeadline: deadline }).where(eq(holdDeadlines.bookingId, h.bookingId));
          summary.HoldsNotified += 1;
          summary.NotificationsCreated += created;
          notificationsCreated.inc({ type: 'DeadlineSoon' }, created);
        }
      });
      return summary;
    },
  };
}

export const notificationsDeadlineSoonJob = createDeadlineSoonJob();
