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
  /** crm's time of the transition (envelope occurredAt) */
  occurredAt?: Date;
  /** crm's creation time of the booking (DESIGN decision 9); absent in events written before it was carried */
  bookingCreatedAt?: Date;
}

/** What the consumer already applied for this booking (chessboard.crm_booking_versions). */
export interface BookingRecord {
  appliedVersion: number;
  released: boolean;
  /** crm's time of the latest event of the booking the consumer recorded (null: not known) */
  lastEventAt?: Date | null;
  /** crm's creation time of the booking (null: recorded before events carried it) */
  bookingCreatedAt?: Date | null;
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

/** How the event's booking stands in crm's time against another booking of the object. */
export type BookingOrder = 'newer' | 'older' | 'same' | 'unknown';

/** crm's creation time of the event's booking: carried by the event, else recorded, else a create's own time. */
export function eventBookingCreatedAt(event: CrmBookingEvent, record: BookingRecord | null): Date | null {
  if (event.bookingCreatedAt) return event.bookingCreatedAt;
  if (record?.bookingCreatedAt) return record.bookingCreatedAt;
  // a create happens at its booking's creation (crm writes both with one clock reading)
  return event.kind === 'created' ? event.occurredAt ?? null : null;
}

/**
 * DESIGN decisions 7 and 9: is the event's booking newer or older than `other` (the booking that holds
 * the object, or the newest one the consumer recorded for it)? By their creation times when both are
 * known. Otherwise by what was recorded of `other`: it was active at its latest recorded event, so a
 * booking created after that is newer and one created before it is older (INV-BKG-001: their active
 * periods do not overlap). For a hold whose booking the consumer never saw (seeded, imported), the time
 * chessboard took it stands in: crm had created the holder before that.
 */
export function orderAgainst(createdAt: Date | null, other: BookingRecord | null, state: PropertyObjectState | null): BookingOrder {
  if (!createdAt) return 'unknown';
  const t = createdAt.getTime();
  if (other?.bookingCreatedAt) {
    const o = other.bookingCreatedAt.getTime();
    return t > o ? 'newer' : t < o ? 'older' : 'same';
  }
  if (other?.lastEventAt) {
    const o = other.lastEventAt.getTime();
    return t > o ? 'newer' : t < o ? 'older' : 'unknown';
  }
  if (!other && state && t > state.statusChangedAt.getTime()) return 'newer';
  return 'unknown';
}

/**
 * Decides what a CRM booking event does to the object it names.
 *  - DESIGN decision 3: an event of a booking that was released (or a tombstone left by a release that
 *    overtook its create) is a no-op; an event not newer than the booking's applied version is a no-op.
 *  - DESIGN decisions 7 and 9 (INV-CHS-003 read with INV-BKG-001): an event of a booking other than the
 *    holder's is placed in crm's time by the bookings' creation times. A NEWER booking proves the holder
 *    has ended: the hold moves to it in the state the event carries (Reserved for a create, Booked with
 *    its booked_until for a confirm or extend, Sold for a sale; Free for its own release). An OLDER
 *    booking has ended before the holder began: a logged no-op (its tombstone stops its other late
 *    events). HOLD_MISMATCH only when no order explains the event: two bookings created at the same
 *    time, or one that cannot be placed in time at all.
 *  - A Free object is compared with the newest booking recorded for it (`latest`): an older booking's
 *    late event does not re-hold it. An event for a Sold or Hidden object is refused (NOT_AVAILABLE),
 *    except a release (nothing to free), an older booking's, which the sale ended, and the selling
 *    booking's own late events.
 *  - INV-CHS-001: every step goes through the source guard (catch-up moves only when the event is ahead).
 */
export function decideCrmEvent(
  state: PropertyObjectState,
  record: BookingRecord | null,
  event: CrmBookingEvent,
  at: Date,
  /** the record of the booking that holds the object when it is another booking than the event's;
   *  for an object that is not held, the newest other booking recorded for it (null: none) */
  other: BookingRecord | null = null,
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
  const createdAt = eventBookingCreatedAt(event, record);
  const olderNoOp = (what: string) => noOp(`${event.kind} of booking ${event.bookingId}, older than ${what}: it has ended; no-op (DESIGN decision 9)`, { releasesBooking: true });

  /** The state the event carries, reached from a Free object (`from`). */
  const carried = (from: PropertyObjectState, reason?: string): Step[] => {
    const withReason = (s: Step): Step => (reason ? { ...s, reason } : s);
    switch (event.kind) {
      case 'created': return [withReason(step('Reserve', reserve(from, { ...hold, reservedUntil: event.reservedUntil! }, at), from))];
      case 'confirmed':
      case 'extended': return [withReason(step('Book', book(from, { ...hold, bookedUntil: event.bookedUntil! }, at, { catchUp: true }), from))];
      case 'sale-started': return [withReason(step('MarkSold', markSold(from, event.soldAt ?? at, at, { catchUp: true }), from))];
      case 'released': return [];
    }
  };

  if (state.status === 'Hidden') {
    // a booking that never held a hidden object (its create was refused) releases nothing: no page for ops
    if (event.kind === 'released') return noOp('object Hidden; release is a no-op', { releasesBooking: true });
    return notAvailable(state.status);
  }
  if (state.status === 'Sold') {
    if (event.kind === 'sale-started') return noOp('object already Sold');
    if (event.kind === 'released') return noOp('object already Sold; release is a no-op', { releasesBooking: true });
    if (orderAgainst(createdAt, other, null) === 'older') return olderNoOp(`the booking that sold the object`);
    return notAvailable(state.status);
  }
  if (state.status === 'Free') {
    if (orderAgainst(createdAt, other, null) === 'older') return olderNoOp(`the newest booking of the object`);
    if (event.kind === 'released') return noOp(`object already ${state.status}; release is a no-op`, { releasesBooking: true });
    const steps = carried(state);
    return apply(`${steps[0]!.transition} Free → ${steps[0]!.to.status}${event.kind === 'created' ? '' : ' (catch-up)'}`, steps);
  }

  if (sameBooking) {
    switch (event.kind) {
      case 'released': return apply(`Release ${state.status} → Free`, [step('Release', release(state, 'Crm', at))]);
      case 'created': return noOp('object already held by this booking');
      case 'confirmed':
      case 'extended':
        if (state.status === 'Reserved') return apply('Book Reserved → Booked', [step('Book', book(state, { ...hold, bookedUntil: event.bookedUntil! }, at))]);
        return apply('Extend Booked → Booked', [step('Extend', extend(state, event.bookedUntil!, at))]);
      case 'sale-started': {
        const catchUp = state.status === 'Reserved';
        return apply(`MarkSold ${state.status} → Sold${catchUp ? ' (catch-up)' : ''}`, [step('MarkSold', markSold(state, event.soldAt ?? at, at, { catchUp }))]);
      }
    }
  }

  // Another booking holds the object (of this deal or another one).
  const order = orderAgainst(createdAt, other, state);
  const previous = { bookingId: state.holdBookingId, dealId: state.holdDealId! };
  if (order === 'older') return olderNoOp(`the hold's booking ${previous.bookingId ?? '(unknown)'} of deal ${previous.dealId}`);
  if (order !== 'newer') {
    return mismatch(`${event.kind} of booking ${event.bookingId} (deal ${event.dealId}), object held by booking ${previous.bookingId ?? '(unknown)'} of deal ${previous.dealId}`
      + (order === 'same' ? ': both created at the same time' : ': the two bookings cannot be ordered in time'));
  }
  // INV-BKG-001: a booking created after the holder's proves the holder has ended — its release is still
  // in flight on another topic. The hold moves to the newer booking in the state this event carries.
  const takeOver = `hold taken over from booking ${previous.bookingId ?? '(unknown)'} of deal ${previous.dealId} by the newer booking ${event.bookingId} of deal ${event.dealId} (DESIGN decision 9)`;
  const freed = release(state, 'Crm', at);
  const releaseStep: Step = { transition: 'Release', from: state, to: freed, ...previous, reason: takeOver };
  const released = previous.bookingId ? [{ bookingId: previous.bookingId, dealId: previous.dealId }] : [];
  const steps = carried(freed, takeOver);
  const detail = event.kind === 'released'
    ? `Release: the newer booking ${event.bookingId} has ended too, so the older hold is freed (DESIGN decision 9)`
    : `Release (older booking) + ${steps[0]!.transition}: hold taken over`;
  return apply(detail, [releaseStep, ...steps], released);
}
