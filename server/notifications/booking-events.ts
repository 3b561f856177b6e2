import { createHash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { SYSTEM_ACTOR } from '../auth/actor';
import { objectLabels } from '../chessboard/queries';
import type { CrmPayload } from '../contracts/crm';
import { bookingTransitionActor, dealTitles } from '../crm/queries';
import type { AnyEnvelope } from '../contracts/envelope';
import type { Tx } from '../platform/db';
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

/** Moves notifications' projection of the hold's deadline; an older bookingVersion changes nothing. */
async function applyHold(tx: Tx, n: BookingNotice): Promise<void> {
  if (!n.bookingId || !n.propertyObjectId || n.bookingVersion === null) return;
  const ended = n.hold !== null && 'ended' in n.hold;
  const phase = n.hold && 'phase' in n.hold ? n.hold.phase : null;
  const deadline = n.hold && 'deadline' in n.hold ? new Date(n.hold.deadline) : null;
  const moves = n.hold !== null;
  await tx.insert(holdDeadlines).values({
    bookingId: n.bookingId, tenantId: n.tenantId, dealId: n.dealId, propertyObjectId: n.propertyObjectId, createdBy: n.createdBy, investorId: n.investorId ?? null,
    // a paid event seen first knows no deadline yet: a row of version 0 only remembers the creator
    phase, deadline, version: moves ? n.bookingVersion : 0, ended,
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
  });
}

/**
 * What a reader recognises a notice by — the flat's number, the deal's title and who acted — read when
 * the notice is made (the events carry ids only) from the owners' read modules in the tenant; a label
 * the owner does not have (yet) is left out and the bell falls back to what it has.
 */
export async function describeBooking(tx: Tx, n: { tenantId: string; dealId: string; bookingId: string | null; propertyObjectId: string | null; bookingVersion: number | null }): Promise<Record<string, unknown>> {
  // the ids come from an event whose payload tenant matched its envelope's, and crm books only its own
  // tenant's objects: read by id, as the system
  const [labels, titles, actor] = await Promise.all([
    n.propertyObjectId ? objectLabels(tx, SYSTEM_ACTOR, [n.propertyObjectId]) : [],
    dealTitles(tx, SYSTEM_ACTOR, [n.dealId]),
    n.bookingId && n.bookingVersion !== null ? bookingTransitionActor(tx, n.tenantId, n.bookingId, n.bookingVersion) : null,
  ]);
  const label = labels.find((l) => l.id === n.propertyObjectId);
  const out: Record<string, unknown> = {};
  if (label) out.objectNumber = label.number;
  if (titles[n.dealId]) out.dealTitle = titles[n.dealId];
  if (actor) { out.actorType = actor.actorType; out.actorId = actor.actorId; }
  return out;
}

/**
 * Applies one crm event: the hold projection, then one notification per participant (unique per
 * message and recipient), then NOTIFY for the live feed. Returns how many rows were new.
 */
export async function applyBookingEvent(tx: Tx, envelope: AnyEnvelope, n: BookingNotice): Promise<number> {
  let createdBy = n.createdBy;
  let investorId = n.investorId ?? null;
  if ((!createdBy || !investorId) && n.bookingId) {
    const [hold] = await tx.select({ createdBy: holdDeadlines.createdBy, investorId: holdDeadlines.investorId }).from(holdDeadlines).where(eq(holdDeadlines.bookingId, n.bookingId));
    createdBy ??= hold?.createdBy ?? null;
    investorId ??= hold?.investorId ?? null;
  }
  await applyHold(tx, { ...n, createdBy, investorId });
  const data = { ...n.data, propertyObjectId: n.propertyObjectId, ...(await describeBooking(tx, n)) };
  return insertNotifications(tx, {
    messageId: envelope.messageId, tenantId: n.tenantId, type: n.type, bookingId: n.bookingId, dealId: n.dealId,
    data, occurredAt: new Date(envelope.occurredAt), createdBy, investorId,
  });
}

export async function insertNotifications(tx: Tx, input: {
  messageId: string; tenantId: string; type: NotificationType; bookingId: string | null; dealId: string;
  data: Record<string, unknown>; occurredAt: Date; createdBy: string | null; investorId?: string | null;
}): Promise<number> {
  const rows = recipientsOf(input.createdBy, input.investorId ?? null).map((r) => ({
    messageId: input.messageId, ...r, tenantId: input.tenantId, type: input.type, bookingId: input.bookingId,
    dealId: input.dealId, data: input.data, occurredAt: input.occurredAt,
  }));
  const inserted = await tx.insert(notifications).values(rows).onConflictDoNothing().returning({ id: notifications.id });
  if (inserted.length > 0) await tx.execute(sql`SELECT pg_notify(${NOTIFICATIONS_CHANNEL}, ${input.tenantId})`);
  return inserted.length;
}

/** A stable uuid for (booking, deadline): the DeadlineSoon message id, so one deadline yields one notification. */
export function deadlineSoonMessageId(bookingId: string, deadline: Date): string {
  const h = createHash('sha256').update(`deadline-soon:${bookingId}:${deadline.toISOString()}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
