import { sql } from 'drizzle-orm';
import type { PlatformEnv } from '../platform/env';
import type { JobContext, JobDefinition, JobSummary } from '../platform/jobs/types';
import type { NotificationsEnv } from './env';
import { notificationsPruned } from './metrics';

type NotificationsJobEnv = PlatformEnv & NotificationsEnv;

export interface NotificationsRetentionSummary extends JobSummary {
  DeletedNotifications: number;
  DeletedHoldDeadlines: number;
  Cutoff: string;
}

const BATCH = 2000;

/**
 * Job `notifications-retention`: removes read notifications older than NOTIFICATIONS_RETENTION_MS (a
 * user's row once that user read it; an audience row once one of its audience read it — ARCHITECTURE.md),
 * and the deadline projection of holds that ended before the cutoff. Unread notifications are kept.
 * Batches of 2000 rows, each its own statement, so a long backlog never holds long locks.
 *
 * The frame (summary interface, per-cycle limit, a JobDefinition whose run computes `at` from opts.now)
 * is every job's, by platform/jobs/types; what repeats is that contract's shape, not logic to share.
 */
export function createNotificationsRetentionJob(opts: { now?: () => Date } = {}): JobDefinition<NotificationsJobEnv> {
  return {
    name: 'notifications-retention',
    schedule: (env) => ({ cron: env.NOTIFICATIONS_RETENTION_SCHEDULE, timezone: 'UTC' }),
    async run(ctx: JobContext<NotificationsJobEnv>): Promise<NotificationsRetentionSummary> {
      const at = opts.now?.() ?? new Date();
      const cutoff = new Date(at.getTime() - ctx.env.NOTIFICATIONS_RETENTION_MS);
      const { db } = ctx.database;
      let deleted = 0;
      for (;;) {
        if (ctx.signal.aborted) break;
        const rows = await db.execute(sql`DELETE FROM notifications.notifications WHERE id IN (
            SELECT n.id FROM notifications.notifications n
             WHERE n.created_at < ${cutoff.toISOString()}::timestamptz
               AND EXISTS (SELECT 1 FROM notifications.reads r WHERE r.notification_id = n.id)
             LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
          RETURNING id`);
        deleted += rows.length;
        if (rows.length < BATCH) break;
      }
      const holds = await db.execute(sql`DELETE FROM notifications.hold_deadlines
        WHERE ended AND updated_at < ${cutoff.toISOString()}::timestamptz RETURNING booking_id`);
      notificationsPruned.inc(deleted);
      return { DeletedNotifications: deleted, DeletedHoldDeadlines: holds.length, Cutoff: cutoff.toISOString() };
    },
  };
}

export const notificationsRetentionJob = createNotificationsRetentionJob();
