import { and, desc, eq, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { tenantScope, type Actor } from '../auth/actor';
import type { Db } from '../platform/db';
import { notificationReads, notifications, type NotificationType } from './schema';

/**
 * Reads and read-marks of the signed-in user's notifications. Every query is scoped here again (the
 * router's middleware also checks): the rows addressed to the user (in the user's tenant for a tenant
 * role) and, for a developer manager, the rows addressed to the tenant's developer managers.
 */
export function visibleTo(actor: Actor): SQL {
  const scope = tenantScope(actor); // a tenant role without a tenant is refused, never widened
  const mine = scope === null
    ? eq(notifications.recipientUserId, actor.userId)
    : and(eq(notifications.recipientUserId, actor.userId), eq(notifications.tenantId, scope))!;
  if (actor.role === 'developer_manager' && scope !== null) {
    return or(mine, and(eq(notifications.audienceRole, 'developer_manager'), eq(notifications.tenantId, scope)))!;
  }
  return mine;
}

const readBy = (userId: string) => sql<boolean>`EXISTS (SELECT 1 FROM ${notificationReads} r WHERE r.notification_id = ${notifications.id} AND r.user_id = ${userId})`;

export interface NotificationItem {
  id: number;
  type: NotificationType;
  bookingId: string | null;
  dealId: string;
  data: Record<string, unknown>;
  occurredAt: Date;
  read: boolean;
}

/** Newest first; `cursor` = the last id of the previous page. */
export async function listNotifications(db: Db, actor: Actor, input: { cursor?: number | null; limit: number; unreadOnly?: boolean }):
Promise<{ items: NotificationItem[]; nextCursor: number | null }> {
  const rows = await db
    .select({
      id: notifications.id, type: notifications.type, bookingId: notifications.bookingId, dealId: notifications.dealId,
      data: notifications.data, occurredAt: notifications.occurredAt, read: readBy(actor.userId),
    })
    .from(notifications)
    .where(and(visibleTo(actor), input.cursor ? lt(notifications.id, input.cursor) : undefined, input.unreadOnly ? sql`NOT ${readBy(actor.userId)}` : undefined))
    .orderBy(desc(notifications.id))
    .limit(input.limit + 1);
  const items = rows.slice(0, input.limit).map((r) => ({ ...r, data: (r.data ?? {}) as Record<string, unknown> }));
  return { items, nextCursor: rows.length > input.limit ? items[items.length - 1]!.id : null };
}

export async function unreadCount(db: Db, actor: Actor): Promise<{ unread: number }> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(notifications)
    .leftJoin(notificationReads, and(eq(notificationReads.notificationId, notifications.id), eq(notificationReads.userId, actor.userId)))
    .where(and(visibleTo(actor), isNull(notificationReads.userId)));
  return { unread: row?.n ?? 0 };
}

/** Marks the given notifications read for this user; ids the user cannot see are ignored (not an error: a foreign id looks missing). */
export async function markRead(db: Db, actor: Actor, input: { ids: number[] }): Promise<{ marked: number }> {
  return insertReads(db, actor, inArray(notifications.id, input.ids));
}

export async function markAllRead(db: Db, actor: Actor): Promise<{ marked: number }> {
  return insertReads(db, actor);
}

async function insertReads(db: Db, actor: Actor, where?: SQL): Promise<{ marked: number }> {
  const rows = await db.execute(sql`INSERT INTO ${notificationReads} (notification_id, user_id)
    SELECT ${notifications.id}, ${actor.userId}::uuid FROM ${notifications} WHERE ${and(visibleTo(actor), where)}
    ON CONFLICT DO NOTHING RETURNING notification_id`);
  return { marked: rows.length };
}
