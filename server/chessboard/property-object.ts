import { AppError } from '../platform/errors';
import type { PROPERTY_OBJECT_STATUSES, STATUS_SOURCES } from './schema';

/**
 * PropertyObject: the sale status of one unit of the chessboard. Pure transition rules, no I/O —
 * commands, the CRM consumer and the hold-expiration job load a state, ask this module for the next
 * one, and persist what it returns.
 */

export type PropertyObjectStatus = (typeof PROPERTY_OBJECT_STATUSES)[number];
export type StatusSource = (typeof STATUS_SOURCES)[number];

export interface PropertyObjectState {
  status: PropertyObjectStatus;
  reservedUntil: Date | null;
  bookedUntil: Date | null;
  holdDealId: string | null;
  holdBookingId: string | null;
  soldAt: Date | null;
  statusSource: StatusSource;
  statusChangedAt: Date;
  updatedAt: Date;
  version: number;
}

/** The state fields of a loaded row (a locked object, an expired hold): what the transitions read. */
export const stateOf = (o: PropertyObjectState): PropertyObjectState => ({
  status: o.status, reservedUntil: o.reservedUntil, bookedUntil: o.bookedUntil, holdDealId: o.holdDealId,
  holdBookingId: o.holdBookingId, soldAt: o.soldAt, statusSource: o.statusSource, statusChangedAt: o.statusChangedAt,
  updatedAt: o.updatedAt, version: o.version,
});

export const PROPERTY_OBJECT_ERRORS = {
  NOT_FOUND: 'CHESSBOARD_PROPERTY_OBJECT_NOT_FOUND',
  NOT_HELD: 'CHESSBOARD_PROPERTY_OBJECT_NOT_HELD',
  NOT_AVAILABLE: 'CHESSBOARD_PROPERTY_OBJECT_NOT_AVAILABLE',
  HOLD_MISMATCH: 'CHESSBOARD_PROPERTY_OBJECT_HOLD_MISMATCH',
  TRANSITION_NOT_ALLOWED: 'CHESSBOARD_PROPERTY_OBJECT_TRANSITION_NOT_ALLOWED',
  INVARIANT_VIOLATED: 'CHESSBOARD_PROPERTY_OBJECT_INVARIANT_VIOLATED',
  HELD: 'CHESSBOARD_PROPERTY_OBJECT_HELD',
  VERSION_CONFLICT: 'CHESSBOARD_PROPERTY_OBJECT_VERSION_CONFLICT',
} as const;

export const isHeld = (status: PropertyObjectStatus): status is 'Reserved' | 'Booked' => status === 'Reserved' || status === 'Booked';

type Move = readonly [from: PropertyObjectStatus, to: PropertyObjectStatus];

/**
 * INV-CHS-001: which status source may make which transition.
 *  - Crm: Reserve (Free → Reserved), Book (Reserved → Booked), Extend (Booked → Booked),
 *    Release (Reserved/Booked → Free), MarkSold (Booked → Sold);
 *  - ExpirationJob (the safety net): Release only (Reserved/Booked → Free);
 *  - Manual: Release (Reserved/Booked → Free), hide/show (Free ↔ Hidden);
 *  - Import: only on create, into Free or Hidden (see `createImported`).
 */
export const ALLOWED_TRANSITIONS: Record<StatusSource, readonly Move[]> = {
  Crm: [['Free', 'Reserved'], ['Reserved', 'Booked'], ['Booked', 'Booked'], ['Reserved', 'Free'], ['Booked', 'Free'], ['Booked', 'Sold']],
  ExpirationJob: [['Reserved', 'Free'], ['Booked', 'Free']],
  Manual: [['Reserved', 'Free'], ['Booked', 'Free'], ['Free', 'Hidden'], ['Hidden', 'Free']],
  Import: [],
};

/**
 * INV-CHS-001, catch-up moves of the CRM consumer (DESIGN decision 3): booking events travel on
 * different topics, so booking-confirmed can overtake booking-created (and deal-sale-started can
 * overtake booking-confirmed). An event newer than anything applied for its booking describes the
 * booking's current state; the object is moved straight to it. Allowed only in that situation.
 */
export const CRM_CATCH_UP_TRANSITIONS: readonly Move[] = [['Free', 'Booked'], ['Free', 'Sold'], ['Reserved', 'Sold']];

const has = (moves: readonly Move[], from: PropertyObjectStatus, to: PropertyObjectStatus) =>
  moves.some(([f, t]) => f === from && t === to);

/** INV-CHS-001 guard. Throws TRANSITION_NOT_ALLOWED for a move the source may not make. */
export function assertTransitionAllowed(
  from: PropertyObjectStatus,
  to: PropertyObjectStatus,
  source: StatusSource,
  opts: { catchUp?: boolean } = {},
): void {
  if (has(ALLOWED_TRANSITIONS[source], from, to)) return;
  if (source === 'Crm' && opts.catchUp && has(CRM_CATCH_UP_TRANSITIONS, from, to)) return;
  throw new AppError(
    PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED,
    'PRECONDITION_FAILED',
    `INV-CHS-001: ${source} may not move a property object ${from} → ${to}`,
    { from, to, source },
  );
}

/** INV-CHS-002 (also a CHECK constraint): timers and the hold owner exist exactly in the statuses that own them. */
export function assertInvChs002(s: Pick<PropertyObjectState, 'status' | 'reservedUntil' | 'bookedUntil' | 'holdDealId' | 'holdBookingId'>): void {
  const ok = (s.status === 'Reserved') === (s.reservedUntil !== null)
    && (s.status === 'Booked') === (s.bookedUntil !== null)
    && isHeld(s.status) === (s.holdDealId !== null)
    && (s.holdBookingId === null || isHeld(s.status));
  if (!ok) {
    throw new AppError(PROPERTY_OBJECT_ERRORS.INVARIANT_VIOLATED, 'PRECONDITION_FAILED', `INV-CHS-002 violated for status ${s.status}`);
  }
}

interface Target {
  status: PropertyObjectStatus;
  reservedUntil?: Date;
  bookedUntil?: Date;
  holdDealId?: string;
  holdBookingId?: string | null;
  soldAt?: Date;
}

function moveTo(state: PropertyObjectState, target: Target, source: StatusSource, at: Date, opts: { catchUp?: boolean; keepStatusChangedAt?: boolean } = {}): PropertyObjectState {
  assertTransitionAllowed(state.status, target.status, source, opts);
  const held = isHeld(target.status);
  const next: PropertyObjectState = {
    status: target.status,
    reservedUntil: target.status === 'Reserved' ? target.reservedUntil ?? null : null,
    bookedUntil: target.status === 'Booked' ? target.bookedUntil ?? null : null,
    holdDealId: held ? target.holdDealId ?? null : null,
    holdBookingId: held ? target.holdBookingId ?? null : null,
    soldAt: target.status === 'Sold' ? target.soldAt ?? at : null,
    statusSource: source,
    statusChangedAt: opts.keepStatusChangedAt ? state.statusChangedAt : at,
    updatedAt: at,
    version: state.version + 1,
  };
  assertInvChs002(next);
  return next;
}

// --- transitions ---------------------------------------------------------------------------------

/** Import: a new object starts Free or Hidden (INV-CHS-001: Import only on create). */
export function createImported(status: 'Free' | 'Hidden', at: Date): PropertyObjectState {
  return {
    status, reservedUntil: null, bookedUntil: null, holdDealId: null, holdBookingId: null, soldAt: null,
    statusSource: 'Import', statusChangedAt: at, updatedAt: at, version: 1,
  };
}

/** Crm Reserve: Free → Reserved until ReserveExpiresAt, held by the deal. */
export function reserve(state: PropertyObjectState, hold: { dealId: string; bookingId: string | null; reservedUntil: Date }, at: Date): PropertyObjectState {
  return moveTo(state, { status: 'Reserved', reservedUntil: hold.reservedUntil, holdDealId: hold.dealId, holdBookingId: hold.bookingId }, 'Crm', at);
}

/** Crm Book: Reserved → Booked until BookingExpiresAt (catch-up: Free → Booked). */
export function book(state: PropertyObjectState, hold: { dealId: string; bookingId: string | null; bookedUntil: Date }, at: Date, opts: { catchUp?: boolean } = {}): PropertyObjectState {
  return moveTo(state, { status: 'Booked', bookedUntil: hold.bookedUntil, holdDealId: hold.dealId, holdBookingId: hold.bookingId ?? state.holdBookingId }, 'Crm', at, opts);
}

/** Crm Extend (DESIGN decision 1): Booked → Booked with the new BookingExpiresAt; the status itself does not change. */
export function extend(state: PropertyObjectState, bookedUntil: Date, at: Date): PropertyObjectState {
  return moveTo(state, { status: 'Booked', bookedUntil, holdDealId: state.holdDealId ?? undefined, holdBookingId: state.holdBookingId }, 'Crm', at, { keepStatusChangedAt: true });
}

/** Release (Crm, ExpirationJob or Manual): Reserved/Booked → Free, timers and hold cleared. */
export function release(state: PropertyObjectState, source: StatusSource, at: Date): PropertyObjectState {
  if (!isHeld(state.status)) {
    throw new AppError(PROPERTY_OBJECT_ERRORS.NOT_HELD, 'PRECONDITION_FAILED', `property object is ${state.status}, not Reserved or Booked`, { status: state.status });
  }
  return moveTo(state, { status: 'Free' }, source, at);
}

/** Crm MarkSold (DESIGN decision 2): Booked → Sold, timers and hold cleared (catch-up: Free/Reserved → Sold). */
export function markSold(state: PropertyObjectState, soldAt: Date, at: Date, opts: { catchUp?: boolean } = {}): PropertyObjectState {
  return moveTo(state, { status: 'Sold', soldAt }, 'Crm', at, opts);
}

/** Manual: Free → Hidden or Hidden → Free. */
export function setHidden(state: PropertyObjectState, hidden: boolean, at: Date): PropertyObjectState {
  return moveTo(state, { status: hidden ? 'Hidden' : 'Free' }, 'Manual', at);
}

// --- the CRM consumer's decision -----------------------------------------------------------------

export type CrmEventKind = 'created' | 'confirmed' | 'extended' | 'released' | 'sale-started';

/** A booking event as the consumer sees it (normalised from the crm contracts). */
export interface CrmBookingEvent {
  kind: CrmEventKind;
  bookingId: string;
  dealId: string;
  /** the booking's version after the transition (DESIGN decision 3); null only if the producer did not know it */
  bookingVersion: number | null;
  reservedUntil?: Date;
  bookedUntil?: Date;
  soldAt?: Date;
  /** crm's time of the transition (envelope occurredAt): orders two bookings of one deal on one object */
  occurredAt?: Date;
}

/** What the consumer already applied for this booking (chessboard.crm_booking_versions). */
export interface BookingRecord {
  appliedVersion: number;
  released: boolean;
  /** crm's time of the latest event of the booking the consumer recorded (null: not known) */
  lastEventAt?: Date | null;
}

export type TransitionName = 'Reserve' | 'Book' | 'Extend' | 'Release' | 'MarkSold';

export interface Step {
  transition: TransitionName;
  from: PropertyObjectState;
  to: PropertyObjectState;
  /** the booking / deal the step is about (the released one for an implied release) */
  bookingId: string | null;
  dealId: string | null;
  /** what the status history says about the step (default: the topic and the transition) */
  reason?: string;
}

export type CrmDecision =
  | { kind: 'apply'; steps: Step[]; detail: string; releasedBookings: { bookingId: string; dealId: string }[] }
  | { kind: 'no-op'; reason: string; record: boolean; releasesBooking: boolean }
  | { kind: 'reject'; code: typeof PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH | typeof PROPERTY_OBJECT_ERRORS.NOT_AVAILABLE; detail: string };

const mismatch = (detail: string): CrmDecision => ({ kind: 'reject', code: PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH, detail });
const notAvailable = (status: PropertyObjectStatus): CrmDecision => ({ kind: 'reject', code: PROPERTY_OBJECT_ERRORS.NOT_AVAILABLE, detail: `object is ${status}` });
const noOp = (reason: string, opts: { record?: boolean; releasesBooking?: boolean } = {}): CrmDecision =>
  ({ kind: 'no-op', reason, record: opts.record ?? true, releasesBooking: opts.releasesBooking ?? false });

/**
 * DESIGN decision 7: is the booking that holds the object older than this create (crm's clock)? Known
 * from the holder's latest recorded event (it was active then, so a create after it came after the
 * holder's end); for a hold whose booking the consumer never saw (seeded, imported) the hold's own
 * time stands in — chessboard took it after crm had created the holder.
 */
function holderIsOlder(state: PropertyObjectState, holder: BookingRecord | null, event: CrmBookingEvent): boolean {
  if (!event.occurredAt) return false;
  const holderAt = holder ? holder.lastEventAt : state.statusChangedAt;
  return !!holderAt && holderAt.getTime() < event.occurredAt.getTime();
}

/**
 * Decides what a CRM booking event does to the object it names.
 *  - DESIGN decision 3: an event of a booking that was released (or a tombstone left by a release that
 *    overtook its create) is a no-op; an event not newer than the booking's applied version is a no-op.
 *  - INV-CHS-003 (HoldOwnership): an event of a deal other than the hold's deal is a HOLD_MISMATCH —
 *    except a create newer than the holding booking: DESIGN decision 7 moves the hold to it.
 *    A release of an object that is not held (already Free: e.g. the safety net released it first) is
 *    an idempotent no-op, not a mismatch.
 *  - INV-CHS-001: every step goes through the source guard (catch-up moves only when the event is ahead).
 */
export function decideCrmEvent(
  state: PropertyObjectState,
  record: BookingRecord | null,
  event: CrmBookingEvent,
  at: Date,
  /** the record of the booking that holds the object, when it is another booking than the event's */
  holder: BookingRecord | null = null,
): CrmDecision {
  if (record?.released) return noOp(`booking ${event.bookingId} already released`, { record: false });
  if (record && event.bookingVersion !== null && event.bookingVersion <= record.appliedVersion) {
    return noOp(`stale bookingVersion ${event.bookingVersion} <= applied ${record.appliedVersion}`, { record: false });
  }
  const held = isHeld(state.status);
  const sameDeal = held && state.holdDealId === event.dealId;
  // holds seeded without a booking id belong to whichever booking of the deal speaks
  const sameBooking = sameDeal && (state.holdBookingId === null || state.holdBookingId === event.bookingId);
  const hold = { dealId: event.dealId, bookingId: event.bookingId };
  const apply = (detail: string, steps: Step[], releasedBookings: { bookingId: string; dealId: string }[] = []): CrmDecision =>
    ({ kind: 'apply', steps, detail, releasedBookings });
  const step = (transition: TransitionName, to: PropertyObjectState, from = state): Step =>
    ({ transition, from, to, bookingId: event.bookingId, dealId: event.dealId });

  switch (event.kind) {
    case 'released': {
      if (!held) return noOp(`object already ${state.status}; release is a no-op`, { releasesBooking: true });
      if (!sameDeal) return mismatch(`release by deal ${event.dealId}, object held by deal ${state.holdDealId}`);
      if (!sameBooking) return noOp(`stale release: the hold belongs to booking ${state.holdBookingId}`, { releasesBooking: true });
      return apply(`Release ${state.status} → Free`, [step('Release', release(state, 'Crm', at))]);
    }
    case 'created': {
      if (state.status === 'Sold' || state.status === 'Hidden') return notAvailable(state.status);
      if (state.status === 'Free') {
        return apply('Reserve Free → Reserved', [step('Reserve', reserve(state, { ...hold, reservedUntil: event.reservedUntil! }, at))]);
      }
      if (sameBooking) return noOp('object already held by this booking');
      if (!sameDeal) {
        // DESIGN decision 7: INV-BKG-001 (crm's unique index) means the holding booking of the other deal
        // had ended before this one was created when it is the OLDER one — its release is still in flight
        // on another topic. Then the hold moves to this booking (its late release becomes a no-op through
        // the tombstone). A create older than the holder, or one we cannot place in time, is refused.
        if (!holderIsOlder(state, holder, event)) {
          return mismatch(`reserve by deal ${event.dealId}, object held by deal ${state.holdDealId} whose booking is not older than this create`);
        }
        const freed = release(state, 'Crm', at);
        const previous = { bookingId: state.holdBookingId, dealId: state.holdDealId! };
        const takeOver = `hold taken over from booking ${previous.bookingId ?? '(unknown)'} of deal ${previous.dealId} by booking ${event.bookingId} of deal ${event.dealId} (DESIGN decision 7)`;
        return apply('Release (older booking of another deal) + Reserve: hold taken over', [
          { transition: 'Release', from: state, to: freed, ...previous, reason: takeOver },
          { ...step('Reserve', reserve(freed, { ...hold, reservedUntil: event.reservedUntil! }, at), freed), reason: takeOver },
        ], previous.bookingId ? [{ bookingId: previous.bookingId, dealId: previous.dealId }] : []);
      }
      // Another booking of the same deal holds it. INV-BKG-001 (one active booking per object in crm)
      // says one of the two ended before the other began — but creates travel on different partitions,
      // so the late one may be either. crm's clock tells which: the holding booking was active at its
      // last recorded event, so a booking created before that is the EARLIER one: it has ended, its
      // create is late and must not take the hold (its tombstone also stops its other late events).
      if (holder?.lastEventAt && event.occurredAt && event.occurredAt.getTime() < holder.lastEventAt.getTime()) {
        return noOp(`late create of an earlier booking: the hold's booking ${state.holdBookingId} is newer`, { releasesBooking: true });
      }
      // The holding booking is the earlier one: it ended and its release is still in flight. Release it, then reserve.
      const freed = release(state, 'Crm', at);
      const previous = { bookingId: state.holdBookingId!, dealId: state.holdDealId! };
      return apply('Release (superseded booking) + Reserve', [
        { transition: 'Release', from: state, to: freed, ...previous },
        step('Reserve', reserve(freed, { ...hold, reservedUntil: event.reservedUntil! }, at), freed),
      ], [previous]);
    }
    case 'confirmed':
    case 'extended': {
      const bookedUntil = event.bookedUntil!;
      if (state.status === 'Sold' || state.status === 'Hidden') return notAvailable(state.status);
      if (state.status === 'Free') {
        return apply('Book Free → Booked (catch-up)', [step('Book', book(state, { ...hold, bookedUntil }, at, { catchUp: true }))]);
      }
      if (!sameDeal) return mismatch(`${event.kind} by deal ${event.dealId}, object held by deal ${state.holdDealId}`);
      if (!sameBooking) return mismatch(`${event.kind} of booking ${event.bookingId}, object held by booking ${state.holdBookingId} of the same deal`);
      if (state.status === 'Reserved') return apply('Book Reserved → Booked', [step('Book', book(state, { ...hold, bookedUntil }, at))]);
      return apply('Extend Booked → Booked', [step('Extend', extend(state, bookedUntil, at))]);
    }
    case 'sale-started': {
      const soldAt = event.soldAt ?? at;
      if (state.status === 'Sold') return noOp('object already Sold');
      if (state.status === 'Hidden') return notAvailable(state.status);
      if (state.status === 'Free') return apply('MarkSold Free → Sold (catch-up)', [step('MarkSold', markSold(state, soldAt, at, { catchUp: true }))]);
      if (!sameDeal) return mismatch(`sale of deal ${event.dealId}, object held by deal ${state.holdDealId}`);
      if (!sameBooking) return mismatch(`sale of booking ${event.bookingId}, object held by booking ${state.holdBookingId} of the same deal`);
      const catchUp = state.status === 'Reserved';
      return apply(`MarkSold ${state.status} → Sold${catchUp ? ' (catch-up)' : ''}`, [step('MarkSold', markSold(state, soldAt, at, { catchUp }))]);
    }
  }
}
