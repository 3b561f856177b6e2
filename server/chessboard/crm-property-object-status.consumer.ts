import { and, eq, ne, sql } from 'drizzle-orm';
import type { Tx } from '../platform/db';
import type { ConsumedMessage, ConsumerDefinition, HandlerOutcome } from '../platform/kafka/consumer-runner';
import { RejectMessage } from '../platform/kafka/consumer-runner';
import { CONSUMER_GROUPS } from '../contracts/consumer-groups';
import { TOPICS } from '../platform/kafka/topics';
import type { CrmPayload, CrmTopic } from '../contracts/crm';
import type { Logger } from '../platform/logger';
import {
  lockPropertyObject, persistStatusTransition, recordCrmBookingVersion, type LockedPropertyObject,
} from './property-object-persistence';
import { CRM_STATUS_CONSUMED_TOPICS, crmHoldMismatches, crmStatusEvents } from './metrics';
import { decideCrmEvent, eventBookingCreatedAt, isHeld, PROPERTY_OBJECT_ERRORS, stateOf, type BookingRecord, type CrmBookingEvent } from './property-object';
import { crmBookingVersions, holdMismatches } from './schema';

/**
 * Consumer `chessboard.crm-property-object-status`: applies the CRM booking saga to the chessboard.
 *   booking-created → Reserve · booking-confirmed → Book · booking-extended → booked_until moves
 *   booking-expired / booking-cancelled / deal-cancelled → Release · deal-sale-started → MarkSold
 * (booking-paid is not consumed here.) The runner owns the inbox dedup, the transaction and the
 * offset; this handler only applies. Rules: see decideCrmEvent (INV-CHS-001/003, DESIGN decision 3).
 */

const CONSUMED_TOPICS = CRM_STATUS_CONSUMED_TOPICS satisfies readonly CrmTopic[];

type ConsumedTopic = (typeof CONSUMED_TOPICS)[number];

/** The booking's creation time an event carries (DESIGN decision 9); nothing for events written before it was carried. */
const createdAtOf = (p: { bookingCreatedAt?: string | null }): { bookingCreatedAt?: Date } =>
  (p.bookingCreatedAt ? { bookingCreatedAt: new Date(p.bookingCreatedAt) } : {});

/** Normalises a crm payload; null for a deal event that names no booking (nothing to do on the chessboard). */
export function toCrmBookingEvent(topic: ConsumedTopic, payload: unknown): (CrmBookingEvent & { propertyObjectId: string; tenantId: string }) | null {
  switch (topic) {
    case TOPICS.bookingCreated: {
      const p = payload as CrmPayload<typeof TOPICS.bookingCreated>;
      return { kind: 'created', bookingId: p.bookingId, dealId: p.dealId, propertyObjectId: p.propertyObjectId, tenantId: p.tenantId, bookingVersion: p.bookingVersion, reservedUntil: new Date(p.reserveExpiresAt), ...createdAtOf(p) };
    }
    case TOPICS.bookingConfirmed: {
      const p = payload as CrmPayload<typeof TOPICS.bookingConfirmed>;
      return { kind: 'confirmed', bookingId: p.bookingId, dealId: p.dealId, propertyObjectId: p.propertyObjectId, tenantId: p.tenantId, bookingVersion: p.bookingVersion, bookedUntil: new Date(p.bookingExpiresAt), ...createdAtOf(p) };
    }
    case TOPICS.bookingExtended: {
      const p = payload as CrmPayload<typeof TOPICS.bookingExtended>;
      return { kind: 'extended', bookingId: p.bookingId, dealId: p.dealId, propertyObjectId: p.propertyObjectId, tenantId: p.tenantId, bookingVersion: p.bookingVersion, bookedUntil: new Date(p.bookingExpiresAt), ...createdAtOf(p) };
    }
    case TOPICS.bookingExpired:
    case TOPICS.bookingCancelled: {
      const p = payload as CrmPayload<typeof TOPICS.bookingExpired | typeof TOPICS.bookingCancelled>;
      return { kind: 'released', bookingId: p.bookingId, dealId: p.dealId, propertyObjectId: p.propertyObjectId, tenantId: p.tenantId, bookingVersion: p.bookingVersion, ...createdAtOf(p) };
    }
    case TOPICS.dealCancelled: {
      const p = payload as CrmPayload<typeof TOPICS.dealCancelled>;
      if (!p.bookingId || !p.propertyObjectId) return null;
      return { kind: 'released', bookingId: p.bookingId, dealId: p.dealId, propertyObjectId: p.propertyObjectId, tenantId: p.tenantId, bookingVersion: p.bookingVersion, ...createdAtOf(p) };
    }
    case TOPICS.dealSaleStarted: {
      const p = payload as CrmPayload<typeof TOPICS.dealSaleStarted>;
      return { kind: 'sale-started', bookingId: p.bookingId, dealId: p.dealId, propertyObjectId: p.propertyObjectId, tenantId: p.tenantId, bookingVersion: p.bookingVersion, soldAt: new Date(p.startedAt), ...createdAtOf(p) };
    }
  }
}

const recordColumns = {
  appliedVersion: crmBookingVersions.appliedVersion, released: crmBookingVersions.released, lastEventAt: crmBookingVersions.lastEventAt,
  bookingCreatedAt: crmBookingVersions.bookingCreatedAt,
};

async function loadBookingRecord(tx: Tx, bookingId: string): Promise<BookingRecord | null> {
  const [row] = await tx.select(recordColumns).from(crmBookingVersions).where(eq(crmBookingVersions.bookingId, bookingId));
  return row ?? null;
}

/**
 * The newest booking of the object the consumer recorded, other than `exceptBookingId` (DESIGN decision 9):
 * what a Free or Sold object's late events are ordered against. Creation time first; records written before
 * it was carried are placed by their latest event.
 */
async function loadNewestOtherBooking(tx: Tx, propertyObjectId: string, exceptBookingId: string): Promise<BookingRecord | null> {
  const [row] = await tx.select(recordColumns).from(crmBookingVersions)
    .where(and(eq(crmBookingVersions.propertyObjectId, propertyObjectId), ne(crmBookingVersions.bookingId, exceptBookingId)))
    .orderBy(sql`coalesce(${crmBookingVersions.bookingCreatedAt}, ${crmBookingVersions.lastEventAt}) DESC NULLS LAST`)
    .limit(1);
  return row ?? null;
}

export async function handleCrmPropertyObjectStatus(
  tx: Tx,
  message: ConsumedMessage,
  ctx: { logger: Logger; now?: Date },
): Promise<HandlerOutcome> {
  const { envelope } = message;
  const topic = message.topic as ConsumedTopic;
  const event = toCrmBookingEvent(topic, envelope.payload);
  const kind = event?.kind ?? 'none';
  if (!event) {
    crmStatusEvents.inc({ event: kind, result: 'no-op' });
    return { result: 'no-op', detail: 'deal event without a booking' };
  }
  const at = ctx.now ?? new Date();

  const object = await lockPropertyObject(tx, event.propertyObjectId);
  if (!object && event.kind === 'released') {
    // a booking of an object chessboard deleted ended (crm booked it while its view lagged, and the
    // booking was then cancelled or expired): nothing holds a deleted object, so there is nothing to release
    crmStatusEvents.inc({ event: kind, result: 'no-op' });
    return { result: 'no-op', detail: 'no such property object; release is a no-op' };
  }
  if (!object || object.tenantId !== event.tenantId) {
    crmStatusEvents.inc({ event: kind, result: 'rejected' });
    throw new RejectMessage(PROPERTY_OBJECT_ERRORS.NOT_FOUND, `property object ${event.propertyObjectId} not found in tenant ${event.tenantId}`);
  }
  event.occurredAt = new Date(envelope.occurredAt);
  const record = await loadBookingRecord(tx, event.bookingId);
  const other = isHeld(object.status)
    ? (object.holdBookingId && object.holdBookingId !== event.bookingId ? await loadBookingRecord(tx, object.holdBookingId) : null)
    : await loadNewestOtherBooking(tx, object.id, event.bookingId);
  const decision = decideCrmEvent(stateOf(object), record, event, at, other);
  const bookingCreatedAt = eventBookingCreatedAt(event, record);
  const log = ctx.logger.child({ propertyObjectId: object.id, bookingId: event.bookingId, dealId: event.dealId, bookingVersion: event.bookingVersion });

  if (decision.kind === 'reject') {
    crmStatusEvents.inc({ event: kind, result: 'rejected' });
    if (decision.code === PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH) {
      crmHoldMismatches.inc({ topic });
      log.warn({ code: decision.code, holdDealId: object.holdDealId, holdBookingId: object.holdBookingId, status: object.status, detail: decision.detail }, 'INV-CHS-003 hold mismatch');
      // A release of a booking that does not hold the object still says that booking has ended in crm:
      // its tombstone stops its own late create/confirm from taking the object later (DESIGN decisions 3, 7).
      const tombstone = event.kind === 'released' && object.holdBookingId !== event.bookingId;
      throw new RejectMessage(decision.code, `INV-CHS-003: ${decision.detail}`, async (rtx) => {
        await recordHoldMismatch(rtx, object, message, event.bookingId, event.dealId, decision.detail);
        if (tombstone) {
          await recordCrmBookingVersion(rtx, { bookingId: event.bookingId, propertyObjectId: object.id, dealId: event.dealId, version: event.bookingVersion, released: true, at, eventAt: event.occurredAt, bookingCreatedAt });
        }
      });
    }
    throw new RejectMessage(decision.code, decision.detail);
  }

  if (decision.kind === 'no-op') {
    if (decision.record) {
      await recordCrmBookingVersion(tx, { bookingId: event.bookingId, propertyObjectId: object.id, dealId: event.dealId, version: event.bookingVersion, released: decision.releasesBooking, at, eventAt: event.occurredAt, bookingCreatedAt });
    }
    crmStatusEvents.inc({ event: kind, result: 'no-op' });
    log.debug({ reason: decision.reason, appliedVersion: record?.appliedVersion ?? null }, 'crm booking event is a no-op');
    return { result: 'no-op', detail: decision.reason };
  }

  for (const step of decision.steps) {
    await persistStatusTransition(tx, {
      object,
      from: step.from,
      to: step.to,
      correlationId: envelope.correlationId,
      causationId: envelope.messageId,
      bookingId: step.bookingId,
      dealId: step.dealId,
      reason: step.reason ? `${topic} ${step.transition}: ${step.reason}` : `${topic} ${step.transition}`,
    });
  }
  for (const previous of decision.releasedBookings) {
    await recordCrmBookingVersion(tx, { ...previous, propertyObjectId: object.id, version: null, released: true, at });
  }
  await recordCrmBookingVersion(tx, { bookingId: event.bookingId, propertyObjectId: object.id, dealId: event.dealId, version: event.bookingVersion, released: event.kind === 'released', at, eventAt: event.occurredAt, bookingCreatedAt });
  crmStatusEvents.inc({ event: kind, result: 'applied' });
  return { result: 'applied', detail: decision.detail };
}

/** The ops record of an INV-CHS-003 refusal; runs in the runner's transaction that marks the message rejected. */
async function recordHoldMismatch(tx: Tx, object: LockedPropertyObject, message: ConsumedMessage, bookingId: string, dealId: string, detail: string): Promise<void> {
  await tx.insert(holdMismatches).values({
    propertyObjectId: object.id,
    tenantId: object.tenantId,
    bookingId,
    messageId: message.envelope.messageId,
    topic: message.topic,
    eventDealId: dealId,
    holdDealId: object.holdDealId,
    objectStatus: object.status,
    detail,
  });
}

export const crmPropertyObjectStatusConsumer: ConsumerDefinition = {
  name: CONSUMER_GROUPS.crmPropertyObjectStatus,
  inbox: 'chessboard',
  topics: [...CONSUMED_TOPICS],
  handle: (tx, message, ctx) => handleCrmPropertyObjectStatus(tx, message, ctx),
};
