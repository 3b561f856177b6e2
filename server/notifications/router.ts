import { z } from 'zod';
import { tenantScope } from '../auth/actor';
import { authedProcedure, router } from '../trpc/init';
import { listNotificationLines, listNotifications, markAllRead, markRead, unreadCount } from './queries';

/** Any signed-in user reads their own notifications; the tenant scope is checked here and in every query. */
const notificationsProcedure = authedProcedure.use(({ ctx, next }) => {
  // a tenant role without a tenant: FORBIDDEN before any query (an investor has none: rows addressed to it)
  if (ctx.actor.role !== 'investor') tenantScope(ctx.actor);
  return next();
});

export const listNotificationsInput = z.object({
  cursor: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullish(),
  limit: z.number().int().min(1).max(100).default(20),
  unreadOnly: z.boolean().optional(),
}).strict();
export const markReadInput = z.object({ ids: z.array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER)).min(1).max(200) }).strict();

/** notifications router: the signed-in user's notification centre. */
export const notificationsRouter = router({
  list: notificationsProcedure.input(listNotificationsInput).query(({ ctx, input }) => listNotifications(ctx.database.db, ctx.actor, input)),
  lines: notificationsProcedure.input(listNotificationsInput).query(({ ctx, input }) => listNotificationLines(ctx.database.db, ctx.actor, input)),
  unreadCount: notificationsProcedure.query(({ ctx }) => unreadCount(ctx.database.db, ctx.actor)),
  markRead: notificationsProcedure.input(markReadInput).mutation(({ ctx, input }) => markRead(ctx.database.db, ctx.actor, input)),
  markAllRead: notificationsProcedure.mutation(({ ctx }) => markAllRead(ctx.database.db, ctx.actor)),
});
