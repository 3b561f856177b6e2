import { z } from 'zod';
import { tenantScope, USER_ROLES, type Actor } from '../auth/actor';
import { commandProcedure } from '../trpc/command-procedure';
import { authedProcedure, router } from '../trpc/init';
import { listNotificationLines, listNotifications, markAllRead, markRead, unreadCount } from './queries';

/** A tenant role without a tenant: FORBIDDEN before any query (an investor has none: rows addressed to it). */
function requireNotificationScope(actor: Actor): void {
  if (actor.role !== 'investor') tenantScope(actor);
}

/** Any signed-in user reads their own notifications; the tenant scope is checked here and in every query. */
const notificationsProcedure = authedProcedure.use(({ ctx, next }) => {
  requireNotificationScope(ctx.actor);
  return next();
});

export const listNotificationsInput = z.object({
  cursor: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullish(),
  limit: z.number().int().min(1).max(100).default(20),
  unreadOnly: z.boolean().optional(),
}).strict();
export const markReadInput = z.object({ ids: z.array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER)).min(1).max(200) }).strict();
/** how many of the notifications became read (those already read, or not the caller's, are not counted) */
export const markReadOutput = z.object({ marked: z.number().int() });
export const markAllReadInput = z.void();
export const markAllReadOutput = markReadOutput;

/** notifications router: the signed-in user's notification centre. */
export const notificationsRouter = router({
  list: notificationsProcedure.input(listNotificationsInput).query(({ ctx, input }) => listNotifications(ctx.database.db, ctx.actor, input)),
  lines: notificationsProcedure.input(listNotificationsInput).query(({ ctx, input }) => listNotificationLines(ctx.database.db, ctx.actor, input)),
  unreadCount: notificationsProcedure.query(({ ctx }) => unreadCount(ctx.database.db, ctx.actor)),
  markRead: commandProcedure({
    name: 'notifications.markRead', roles: USER_ROLES, input: markReadInput, output: markReadOutput, logFields: (r) => ({ marked: r.marked }),
    handler: (tx, input, { actor }) => { requireNotificationScope(actor); return markRead(tx, actor, input); },
  }),
  markAllRead: commandProcedure({
    name: 'notifications.markAllRead', roles: USER_ROLES, input: markAllReadInput, output: markAllReadOutput, logFields: (r) => ({ marked: r.marked }),
    handler: (tx, _input, { actor }) => { requireNotificationScope(actor); return markAllRead(tx, actor); },
  }),
});
