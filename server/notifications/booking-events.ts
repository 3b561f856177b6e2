import { createHash } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { CrmPayload } from '../contracts/crm';
import type { AnyEnvelope } from '../contracts/envelope';
import { preparedQuery, type DbOrTx, type Tx } from '../platform/db';
import { TOPICS } from '../platform/kafka/topics';
import { holdDeadlines, notifications, type NotificationType } from './schema';

/** The channel of PostgreSQL NOTIFY on every new notification (payload: tenant id); the live feed listens. */
export const NOTIFICATIONS_CHANNEL = 'pin_notifications';

export const NOTIFICATION_TOPICS = [
  TOPICS.bookingCreated, TOPICS.bookingConfirmed, TOPICS.bookingPaid, TOPICS.bookingExtended,
  TOPICS.bookingExpired, TOPICS.bookingCancelled, TOPICS.dealCancelled, TOPICS.dealSaleStarted,
] as const;
export type NotificationTopic = (typeof NOTIFICATION_TOPICS)[number];

/** What one crm event means to notifications: who, what, and what it does to the hold's deadline. */
export interface BookingNotice {
  type: Exclude<NotificationType, 'DeadlineSoon'>;
  tenantId: string;
  dealId: string;
  bookingId: string | null;
  propertyObjectId: string | null;
  bookingVersion: number | null;
  createdBy: string | null;
  /** the deal's investor (booking-created names it; later events rely on the remembered one) */
  investorId?: string | null;
  data: Record<string, unknown>;
  /** the hold after this event: a deadline (Reserve/Booking), ended, or untouched (null) */
  hold: { phase: 'Reserve' | 'Booking'; deadline: string } | { ended: true } | null;
}

/** Pure: a validated crm payload → the notice. */
export function toNotice(topic: NotificationTopic, payload: unknown): BookingNotice {
  const booking = (p: { bookingId: string; dealId: string; tenantId: string; propertyObjectId: string; bookingVersion: number; createdBy?: string | null }) => ({
    tenantId: p.tenantId, dealId: p.dealId, bookingId: p.bookingId, propertyObjectId: p.propertyObjectId,
    bookingVersion: p.bookingVersion, createdBy: p.createdBy ?? null,
  });
  switch (topic) {
    case TOPICS.bookingCreated: {
      const p = payload as CrmPayload<typeof TOPICS.bookingCreated>;
      return { type: 'BookingCreated', ...booking(p), investorId: p.investorId ?? null, data: { status: p.status, reserveExpiresAt: p.reserveExpiresAt }, hold: { phase: 'Reserve', deadline: p.reserveExpiresAt } };
    }
    case TOPICS.bookingConfirmed: {
      const p = payload as CrmPayload<typeof TOPICS.bookingConfirmed>;
      return { type: 'BookingConfirmed', ...booking(p), data: { status: p.status, bookingExpiresAt: p.bookingExpiresAt }, hold: { phase: 'Booking', deadline: p.bookingExpiresAt } };
    }
    case TOPICS.bookingPaid: {
      const p = payload as CrmPayload<typeof TOPICS.bookingPaid>;
      return { type: 'BookingPaid', ...booking(p), data: { paidAt: p.paidAt }, hold: null };
    }
    case TOPICS.bookingExtended: {
      const p = payload as CrmPayload<typeof TOPICS.bookingExtended>;
      return { type: 'BookingExtended', ...booking(p), data: { previousBookingExpiresAt: p.previousBookingExpiresAt, bookingExpiresAt: p.bookingExpiresAt }, hold: { phase: 'Booking', deadline: p.bookingExpiresAt } };
    }
    case TOPICS.bookingExpired: {
      const p = payload as CrmPayload<typeof TOPICS.bookingExpired>;
      return { type: 'BookingExpired', ...booking(p), data: { phase: p.phase, status: p.status, deadline: p.deadline }, hold: { ended: true } };
    }
    case TOPICS.bookingCancelled: {
      const p = payload as CrmPayload<typeof TOPICS.bookingCancelled>;
      return { type: 'BookingCancelled', ...booking(p), data: { fromStatus: p.fromStatus, reason: p.reason }, hold: { ended: true } };
    }
    case TOPICS.dealCancelled: {
      const p = payload as CrmPayload<typeof TOPICS.dealCancelled>;
      return {
        type: 'DealCancelled', tenantId: p.tenantId, dealId: p.dealId, bookingId: p.bookingId, propertyObjectId: p.propertyObjectId,
        bookingVersion: p.bookingVersion, createdBy: p.createdBy ?? null, data: { reason: p.reason }, hold: p.bookingId ? { ended: true } : null,
      };
    }
    case TOPICS.dealSaleStarted: {
      const p = payload as CrmPayload<typeof TOPICS.dealSaleStarted>;
      return { type: 'DealSaleStarted', ...booking(p), data: { startedAt: p.startedAt }, hold: { ended: true } };
    }
  }
}

export interface Recipient { recipient: string; recipientUserId: string | null; audienceRole: 'developer_manager' | null }

/**
 * The participants of the deal a booking event concerns: the booking's creator (the agent or the
 * investor, named by the event or remembered from an earlier one), the deal's investor when someone
 * else booked for it, and the tenant's developer managers (an audience).
 */
export function recipientsOf(createdBy: string | null, investorId: string | null = null): Recipient[] {
  const list: Recipient[] = [{ recipient: 'role:developer_manager', recipientUserId: null, audienceRole: 'developer_manager' }];
  if (investorId && investorId !== createdBy) list.unshift({ recipient: `user:${investorId}`, recipientUserId: investorId, audienceRole: null });
  if (createdBy) list.unshift({ recipient: `user:${createdBy}`, recipientUserId: createdBy, audienceRole: null });
  return list;
}

/** A value of the event's one statement, bound when it runs (applyBookingEvent). */
const param = (name: string): SQL => sql`${sql.placeholder(name)}`;

/**
 * The upsert that moves notifications' projection of the hold's deadline (an older bookingVersion
 * changes nothing): `moves` when the event moves or ends the hold, otherwise it only remembers the
 * participants. Built once per shape with its values as placeholders; it runs inside the event's one
 * statement (applyBookingEvent).
 */
function holdUpsert(db: DbOrTx, moves: boolean): SQL {
  return db.insert(holdDeadlines).values({
    bookingId: param('bookingId'), tenantId: param('tenantId'), dealId: param('dealId'), propertyObjectId: param('propertyObjectId'),
    createdBy: param('createdBy'), investorId: param('investorId'),
    // a paid event seen first knows no deadline yet: a row of version 0 only remembers the creator
    phase: param('phase'), deadline: param('deadline'), version: param('version'), ended: param('ended'),
  }).onConflictDoUpdate({
    target: holdDeadlines.bookingId,
    set: moves
      ? {
        createdBy: sql`coalesce(${holdDeadlines.createdBy}, excluded.created_by)`,
        investorId: sql`coalesce(${holdDeadlines.investorId}, excluded.investor_id)`,
        phase: sql`CASE WHEN ${holdDeadlines.version} < excluded.version AND NOT ${holdDeadlines.ended} THEN excluded.phase ELSE ${holdDeadlines.phase} END`,
        deadline: sql`CASE WHEN ${holdDeadlines.version} < excluded.version AND NOT ${holdDeadlines.ended} THEN excluded.deadline ELSE ${holdDeadlines.deadline} END`,
        ended: sql`${holdDeadlines.ended} OR excluded.ended`,
        version: sql`greatest(${holdDeadlines.version}, excluded.version)`,
        updatedAt: sql`now()`,
      }
      : { createdBy: sql`coalesce(${holdDeadlines.createdBy}, excluded.created_by)`, investorId: sql`coalesce(${holdDeadlines.investorId}, excluded.investor_id)` },
  }).getSQL();
}

type Described = { tenantId: string | SQL; dealId: string | SQL; bookingId: string | null | SQL; propertyObjectId: string | null | SQL; bookingVersion: number | null | SQL };
type NameColumns = { object_number: string | null; deal_title: string | null; actor_type: 'user' | 'system' | null; actor_id: string | null };

/**
 * What a reader recognises a notice by — the flat's number, the deal's title and who made the
 * transition — as the columns object_number, deal_title, actor_type, actor_id of one row, read from
 * the owners' published views (chessboard.v_property_objects, crm.v_deals, crm.v_booking_timeline) in
 * the event's tenant. The events carry ids only; a name the owner does not have (yet) is null.
 */
function nameColumns(n: Described): { select: SQL; from: SQL } {
  return {
    select: sql`(SELECT po.number FROM chessboard.v_property_objects po WHERE po.id = ${n.propertyObjectId} AND po.tenant_id = ${n.tenantId}) AS object_number,
      (SELECT d.title FROM crm.v_deals d WHERE d.id = ${n.dealId} AND d.tenant_id = ${n.tenantId}) AS deal_title,
      tl.actor_type, tl.actor_id`,
    from: sql`(SELECT 1) AS one LEFT JOIN LATERAL (
      SELECT t.actor_type, t.actor_id FROM crm.v_booking_timeline t
      WHERE t.booking_id = ${n.bookingId} AND t.tenant_id = ${n.tenantId} AND t.booking_version = ${n.bookingVersion}
      ORDER BY t.id DESC LIMIT 1) tl ON true`,
  };
}

/** The names a notice's data carries; a name the owner does not have is left out and the bell falls back to what it has. */
function namesOf(row: NameColumns): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (row.object_number !== null) out.objectNumber = row.object_number;
  if (row.deal_title) out.dealTitle = row.deal_title;
  if (row.actor_type !== null && row.actor_id !== null) { out.actorType = row.actor_type; out.actorId = row.actor_id; }
  return out;
}

/** The flat's number, the deal's title and the transition's actor of a notice, in one statement (nameColumns). */
export async function describeBooking(tx: Tx, n: Described): Promise<Record<string, unknown>> {
  const { select, from } = nameColumns(n);
  const [row] = await tx.execute<NameColumns>(sql`SELECT ${select} FROM ${from}`);
  return namesOf(row!);
}

/**
 * The event's one statement in each of its three shapes (the hold moved, only its participants
 * remembered, no hold), run as named prepared statements: planning this statement (three views, a
 * lateral join, an upsert) cost several times its execution when it was sent unprepared.
 */
function eventStatement(name: string, upsert: 'moves' | 'remembers' | null) {
  return preparedQuery(name, (db) => {
    const names = nameColumns({ tenantId: param('tenantId'), dealId: param('dealId'), bookingId: param('bookingId'), propertyObjectId: param('propertyObjectId'), bookingVersion: param('bookingVersion') });
    // every part of a WITH sees the rows as they were before the statement: `remembered` is the hold
    // before this event moves it (the upsert itself keeps the participants a row remembers: coalesce)
    const remembered = db.$with('remembered', { createdBy: sql<string | null>`created_by`, investorId: sql<string | null>`investor_id` })
      .as(sql`SELECT created_by, investor_id FROM ${holdDeadlines} WHERE booking_id = ${param('bookingId')}`);
    const ctes = upsert ? [remembered, db.$with('moved', {}).as(holdUpsert(db, upsert === 'moves'))] : [remembered];
    return db.with(...ctes).select({
      created_by: sql<string | null>`(SELECT created_by FROM remembered)`,
      investor_id: sql<string | null>`(SELECT investor_id FROM remembered)`,
      object_number: sql<string | null>`object_number`, deal_title: sql<string | null>`deal_title`,
      actor_type: sql<'user' | 'system' | null>`actor_type`, actor_id: sql<string | null>`actor_id`,
    }).from(sql`(SELECT ${names.select} FROM ${names.from}) AS names`);
  });
}
const EVENT_STATEMENTS = {
  moves: eventStatement('notifications_event_hold_moved', 'moves'),
  remembers: eventStatement('notifications_event_hold_remembered', 'remembers'),
  none: eventStatement('notifications_event_no_hold', null),
};

/**
 * Applies one crm event: the hold projection, then one notification per participant (unique per
 * message and recipient), then NOTIFY for the live feed. Returns how many rows were new.
 *
 * The consumer's rate is bound by round trips inside the message's transaction, so one statement reads
 * the participants notifications remembers for the booking (events after booking-created do not name
 * the investor), moves the hold and reads the names; insertNotifications is the second.
 */
export async function applyBookingEvent(tx: Tx, envelope: AnyEnvelope, n: BookingNotice): Promise<number> {
  const hasHold = Boolean(n.bookingId && n.propertyObjectId && n.bookingVersion !== null);
  const moves = n.hold !== null;
  const statement = !hasHold ? EVENT_STATEMENTS.none : moves ? EVENT_STATEMENTS.moves : EVENT_STATEMENTS.remembers;
  const [row] = await statement(tx, {
    bookingId: n.bookingId, tenantId: n.tenantId, dealId: n.dealId, propertyObjectId: n.propertyObjectId, bookingVersion: n.bookingVersion,
    createdBy: n.createdBy, investorId: n.investorId ?? null,
    phase: n.hold && 'phase' in n.hold ? n.hold.phase : null,
    deadline: n.hold && 'deadline' in n.hold ? new Date(n.hold.deadline).toISOString() : null,
    version: moves ? n.bookingVersion : 0,
    ended: n.hold !== null && 'ended' in n.hold,
  }) as NameColumns[] & { created_by: string | null; investor_id: string | null }[];
  const createdBy = n.createdBy ?? row!.created_by;
  const investorId = n.investorId ?? row!.investor_id;
  const data = { ...n.data, propertyObjectId: n.propertyObjectId, ...namesOf(row!) };
  return insertNotifications(tx, {
    messageId: envelope.messageId, tenantId: n.tenantId, type: n.type, bookingId: n.bookingId, dealId: n.dealId,
    data, occurredAt: new Date(envelope.occurredAt), createdBy, investorId,
  });
}

/** One notification per recipient (unique per message and recipient) and, when any is new, NOTIFY for the live feed — one statement. */
export async function insertNotifications(tx: Tx, input: {
  messageId: string; tenantId: string; type: NotificationType; bookingId: string | null; dealId: string;
  data: Record<string, unknown>; occurredAt: Date; createdBy: string | null; investorId?: string | null;
}): Promise<number> {
  const rows = recipientsOf(input.createdBy, input.investorId ?? null).map((r) => ({
    messageId: input.messageId, ...r, tenantId: input.tenantId, type: input.type, bookingId: input.bookingId,
    dealId: input.dealId, data: input.data, occurredAt: input.occurredAt,
  }));
  const insert = tx.insert(notifications).values(rows).onConflictDoNothing().returning({ id: notifications.id });
  // `notified` is read by the outer SELECT, so it runs, once, and only when a row was new
  const [row] = await tx.execute<{ inserted: number }>(sql`
    WITH inserted AS ${insert},
      notified AS (SELECT pg_notify(${NOTIFICATIONS_CHANNEL}, ${input.tenantId}) FROM (SELECT FROM inserted LIMIT 1) AS any_new)
    SELECT (SELECT count(*)::int FROM inserted) AS inserted, (SELECT count(*) FROM notified) AS notified`);
  return row!.inserted;
}

/** A stable uuid for (booking, deadline): the DeadlineSoon message id, so one deadline yields one notification. */
export function deadlineSoonMessageId(bookingId: string, deadline: Date): string {
  const h = createHash('sha256').update(`deadline-soon:${bookingId}:${deadline.toISOString()}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
