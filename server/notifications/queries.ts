import { and, desc, eq, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { tenantScope, type Actor } from '../auth/actor';
import type { Db, DbOrTx } from '../platform/db';
import { notificationReads, notifications, type NotificationType } from './schema';

/**
 * Reads and read-marks of the signed-in user's notifications. Every query is scoped here again (the
 * router's middleware also checks): the rows addressed to the user (in the user's tenant for a tenant
 * role) and, for a developer manager, the rows addressed to the tenant's developer managers.
 */
export function visibleTo(actor: Actor): SQL {
  // an investor's deals are with any developer: what is addressed to the investor, wherever
  if (actor.role === 'investor') return eq(notifications.recipientUserId, actor.userId);
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

export interface NotificationLine extends NotificationItem {
  /** how many notifications of this booking the line stands for (1: a line of its own) */
  count: number;
  /** the unread ones among them (newest first, at most 200): what reading the line marks */
  unreadIds: number[];
}

/**
 * The bell's list: one line per booking (its newest notification by the event's time, how many there
 * are and which are unread), newest line first; a notification without a booking is a line of its own. `cursor` = the
 * last line's id. Repeats of one booking (four extensions, a cancel after a create) read as one line.
 */
export async function listNotificationLines(db: Db, actor: Actor, input: { cursor?: number | null; limit: number; unreadOnly?: boolean }):
Promise<{ items: NotificationLine[]; nextCursor: number | null }> {
  const read = readBy(actor.userId);
  const lines = db.$with('lines').as(
    db.select({
      // the newest notice by the event's time, not by arrival: crm's topics are consumed in parallel, so a
      // booking's "extended" may be stored before its "created" (ids are arrival order)
      latest: sql<number>`(array_agg(${notifications.id} ORDER BY ${notifications.occurredAt} DESC, ${notifications.id} DESC))[1]`.as('latest'),
      count: sql<number>`count(*)::int`.as('count'),
      unreadIds: sql<number[]>`coalesce((array_agg(${notifications.id} ORDER BY ${notifications.id} DESC) FILTER (WHERE NOT ${read}))[1:200], '{}')`.as('unread_ids'),
    })
      .from(notifications)
      .where(visibleTo(actor))
      .groupBy(sql`coalesce(${notifications.bookingId}::text, ${notifications.messageId}::text)`),
  );
  const rows = await db.with(lines)
    .select({
      id: notifications.id, type: notifications.type, bookingId: notifications.bookingId, dealId: notifications.dealId,
      data: notifications.data, occurredAt: notifications.occurredAt, count: lines.count, unreadIds: lines.unreadIds,
    })
    .from(lines)
    .innerJoin(notifications, eq(notifications.id, lines.latest))
    .where(and(input.cursor ? lt(lines.latest, input.cursor) : undefined, input.unreadOnly ? sql`cardinality(${lines.unreadIds}) > 0` : undefined))
    .orderBy(desc(lines.latest))
    .limit(input.limit + 1);
  const items = rows.slice(0, input.limit).map((r) => ({
    ...r, data: (r.data ?? {}) as Record<string, unknown>, unreadIds: (r.unreadIds ?? []).map(Number), read: (r.unreadIds ?? []).length === 0,
  }));
  return { items, nextCursor: rows.length > input.limit ? items[items.length - 1]!.id : null };
}

export async function unreadCount(db: Db, actor: Actor): Promise<{ unread: number }> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(notifications)
    .leftJoin(notificationReads, and(eq(notificationReads.notificationId, notifications.id), eq(notificationReads.userId, actor.userId)))
    .where(and(visibleTo(actor), isNull(notificationReads.userId)));
  return { unread: row?.n ?? 0 };
}

/** Marks the given notifications read for this user; ids the user cannot see are ignored (not an error: a foreign id looks missing). */
export async function markRead(db: DbOrTx, actor: Actor, input: { ids: number[] }): Promise<{ marked: number }> {
  return insertReads(db, actor, inArray(notifications.id, input.ids));
}

export async function markAllRead(db: DbOrTx, actor: Actor): Promise<{ marked: number }> {
  return insertReads(db, actor);
}

async function insertReads(db: DbOrTx, actor: Actor, where?: SQL): Promise<{ marked: number }> {
  const rows = await db.execute(sql`INSERT INTO ${notificationReads} (notification_id, user_id)
    SELECT ${notifications.id}, ${actor.userId}::uuid FROM ${notifications} WHERE ${and(visibleTo(actor), where)}
    ON CONFLICT DO NOTHING RETURNING notification_id`);
  return { marked: rows.length };
}
