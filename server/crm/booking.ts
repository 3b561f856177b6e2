/**
 * BookingEntity — the instance and state of the Booking saga (crm-booking-saga). Pure: no I/O, no
 * clock. Every function takes the current state and `now` and returns the next state, or throws a
 * typed domain error (AppError with a stable code). The commands persist what these return.
 *
 *   [*] → Reserved                      create (INV-BKG-2: deal engaged; INV-BKG-001: object free — unique index)
 *   Reserved → AwaitingPayment          uploadContract (paid program)
 *   Reserved → Booked                   confirm (free program, now ≤ ReserveExpiresAt — INV-BKG-3)
 *   AwaitingPayment → Booked            confirmPayment (receipt uploaded, PaymentStatus → Paid — INV-BKG-4)
 *   Booked → Booked                     extend (BookingExpiresAt += BookingDurationHours — INV-BKG-6)
 *   Booked → Completed                  startSale (with the deal Booking → Sale — INV-BKG-7)
 *   Reserved/AwaitingPayment → ReserveExpired, Booked → BookingExpired   worker (INV-BKG-5)
 *   Reserved/AwaitingPayment/Booked → Cancelled                          cancel (INV-BKG-8)
 * Completed, ReserveExpired, BookingExpired and Cancelled are terminal and immutable (INV-BKG-8).
 */
import type { ACTIVE_BOOKING_STATUSES, BOOKING_STATUSES, PAYMENT_STATUSES, bookings } from './schema';
import { crmError } from './errors';
import { ENGAGED_DEAL_STATUSES, type DealStatus } from './deal';

export type BookingStatus = (typeof BOOKING_STATUSES)[number];
export type ActiveBookingStatus = (typeof ACTIVE_BOOKING_STATUSES)[number];
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];
export type BookingRecord = typeof bookings.$inferSelect;

export const ACTIVE_STATUSES: readonly BookingStatus[] = ['Reserved', 'AwaitingPayment', 'Booked'];
export const TERMINAL_STATUSES: readonly BookingStatus[] = ['Completed', 'ReserveExpired', 'BookingExpired', 'Cancelled'];

export const isActive = (status: BookingStatus): status is ActiveBookingStatus => ACTIVE_STATUSES.includes(status);

/** ProgramTerms of booking-program: which branch (free/paid) and the saga's timers. */
export interface ProgramTerms {
  id: string;
  isPaid: boolean;
  /** default 60 */
  reserveDurationMinutes: number;
  bookingDurationHours: number;
  /** DESIGN decision 10: extensions allowed per booking (absent: the column's default, 2) */
  maxExtensions?: number;
}

export const DEFAULT_MAX_EXTENSIONS = 2;

export type BookingAction =
  | 'create'
  | 'uploadContract'
  | 'uploadReceipt'
  | 'confirm'
  | 'confirmPayment'
  | 'extend'
  | 'startSale'
  | 'expire'
  | 'cancel';

export interface BookingTransition {
  action: BookingAction;
  from: BookingStatus | null;
  to: BookingStatus;
  /** the next state; version is the booking's version after the transition */
  booking: BookingRecord;
}

export type ExpiryPhase = 'Reserve' | 'Booking';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
export const DEFAULT_RESERVE_DURATION_MINUTES = 60;

const addMinutes = (at: Date, minutes: number) => new Date(at.getTime() + minutes * MINUTE_MS);
const addHours = (at: Date, hours: number) => new Date(at.getTime() + hours * HOUR_MS);

function invalidTransition(booking: BookingRecord, action: BookingAction): never {
  throw crmError('CRM_BOOKING_INVALID_TRANSITION', `A ${booking.status} booking does not allow ${action}`, {
    bookingId: booking.id,
    status: booking.status,
    action,
  });
}

/**
 * The answer for a booking the worker already expired: the deadline that was missed (`deadline`, ISO),
 * which the UI shows ("the reserve expired at …"). The caller lost the race with booking-expiration or
 * came too late; clearer than "invalid transition" or "changed by someone else".
 */
export function expiredError(booking: BookingRecord): never {
  if (booking.status === 'BookingExpired') {
    const deadline = (booking.bookingExpiresAt ?? booking.reserveExpiresAt).toISOString();
    throw crmError('CRM_BOOKING_BOOKING_EXPIRED', `The booking time of this booking was over at ${deadline}`, {
      bookingId: booking.id, status: booking.status, bookingExpiresAt: deadline, deadline,
    });
  }
  const deadline = booking.reserveExpiresAt.toISOString();
  throw crmError('CRM_BOOKING_RESERVE_EXPIRED', `The reserve time of this booking was over at ${deadline}`, {
    bookingId: booking.id, status: booking.status, reserveExpiresAt: deadline, deadline,
  });
}

function requireStatus(booking: BookingRecord, action: BookingAction, allowed: readonly BookingStatus[]): void {
  if (allowed.includes(booking.status)) return;
  if (booking.status === 'ReserveExpired' && allowed.some((s) => s === 'Reserved' || s === 'AwaitingPayment') && action !== 'cancel') {
    expiredError(booking);
  }
  if (booking.status === 'BookingExpired' && allowed.includes('Booked') && action !== 'cancel') expiredError(booking);
  invalidTransition(booking, action);
}

/** INV-BKG-3: the reserve holds while now ≤ ReserveExpiresAt; afterwards only the worker may move it. */
function requireReserveOpen(booking: BookingRecord, now: Date): void {
  if (now.getTime() > booking.reserveExpiresAt.getTime()) {
    const deadline = booking.reserveExpiresAt.toISOString();
    throw crmError('CRM_BOOKING_RESERVE_EXPIRED', 'The reserve time of this booking is over', { bookingId: booking.id, reserveExpiresAt: deadline, deadline });
  }
}

/** A Booked booking past BookingExpiresAt belongs to the worker (INV-BKG-5): "the manager did not extend in time". */
function requireBookingOpen(booking: BookingRecord, now: Date): void {
  if (booking.bookingExpiresAt && now.getTime() > booking.bookingExpiresAt.getTime()) {
    const deadline = booking.bookingExpiresAt.toISOString();
    throw crmError('CRM_BOOKING_BOOKING_EXPIRED', 'The booking time of this booking is over', { bookingId: booking.id, bookingExpiresAt: deadline, deadline });
  }
}

function next(booking: BookingRecord, action: BookingAction, changes: Partial<BookingRecord>, now: Date): BookingTransition {
  const nextState: BookingRecord = { ...booking, ...changes, version: booking.version + 1, updatedAt: now };
  return { action, from: booking.status, to: nextState.status, booking: nextState };
}

export interface CreateBookingInput {
  id: string;
  deal: { id: string; tenantId: string; status: DealStatus };
  program: ProgramTerms;
  propertyObjectId: string;
  /** the buyer's requisite set in profile (checked there), a reference only */
  requisites?: RequisiteReference | null;
  createdBy: string | null;
  now: Date;
}

export interface RequisiteReference {
  setId: string;
  version: number;
}

/**
 * [*] → Reserved. INV-BKG-2: only an engaged deal (Application or Booking) may book; a Draft deal
 * (developer not engaged) is excluded. INV-BKG-001 (one active booking per object) is the unique
 * index ux_bookings_active_property_object, checked by the database at insert.
 */
export function createBooking(input: CreateBookingInput): BookingTransition {
  const { deal, program, now } = input;
  if (deal.status === 'Draft') {
    throw crmError('CRM_BOOKING_DEAL_NOT_ENGAGED', 'The developer is not engaged in this deal yet', { dealId: deal.id, dealStatus: deal.status });
  }
  if (!ENGAGED_DEAL_STATUSES.includes(deal.status)) {
    throw crmError('CRM_BOOKING_DEAL_CLOSED', `A ${deal.status} deal cannot book an object`, { dealId: deal.id, dealStatus: deal.status });
  }
  const booking: BookingRecord = {
    id: input.id,
    tenantId: deal.tenantId,
    dealId: deal.id,
    propertyObjectId: input.propertyObjectId,
    programId: program.id,
    status: 'Reserved',
    // ReserveExpiresAt = CreatedAt + ProgramTerms.ReserveDurationMinutes (default 60)
    reserveExpiresAt: addMinutes(now, program.reserveDurationMinutes || DEFAULT_RESERVE_DURATION_MINUTES),
    bookingExpiresAt: null,
    bookedAt: null,
    paymentStatus: program.isPaid ? 'Pending' : 'NotRequired',
    contractDocument: null,
    receiptDocument: null,
    requisiteSetId: input.requisites?.setId ?? null,
    requisiteSetVersion: input.requisites?.version ?? null,
    createdBy: input.createdBy,
    closedReason: null,
    closedAt: null,
    extensionCount: 0,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
  return { action: 'create', from: null, to: 'Reserved', booking };
}

/** Reserved → AwaitingPayment: the developer uploaded the booking contract of a paid program (no event: internal). */
export function uploadContract(booking: BookingRecord, document: string, now: Date, requisites?: RequisiteReference | null): BookingTransition {
  requireStatus(booking, 'uploadContract', ['Reserved']);
  if (booking.paymentStatus === 'NotRequired') {
    throw crmError('CRM_BOOKING_PROGRAM_NOT_PAID', 'The booking program is free: there is no contract to pay', { bookingId: booking.id });
  }
  requireReserveOpen(booking, now);
  // the contract is drawn up for the buyer's requisites: given at create or now, never after
  const setId = requisites?.setId ?? booking.requisiteSetId;
  const version = requisites?.version ?? booking.requisiteSetVersion;
  if (!setId || !version) {
    throw crmError('CRM_BOOKING_REQUISITES_REQUIRED', 'A paid booking needs the buyer\'s requisites before the contract', { bookingId: booking.id });
  }
  return next(booking, 'uploadContract', {
    status: 'AwaitingPayment', paymentStatus: 'ContractUploaded', contractDocument: document, requisiteSetId: setId, requisiteSetVersion: version,
  }, now);
}

/** AwaitingPayment → AwaitingPayment: the client's receipt is attached (PaymentStatus → ReceiptUploaded; a re-upload replaces it). */
export function uploadReceipt(booking: BookingRecord, document: string, now: Date): BookingTransition {
  requireStatus(booking, 'uploadReceipt', ['AwaitingPayment']);
  requireReserveOpen(booking, now);
  return next(booking, 'uploadReceipt', { paymentStatus: 'ReceiptUploaded', receiptDocument: document }, now);
}

/** Reserved → Booked (ConfirmBooking): free program only, and INV-BKG-3 now ≤ ReserveExpiresAt. */
export function confirmBooking(booking: BookingRecord, program: ProgramTerms, now: Date): BookingTransition {
  requireStatus(booking, 'confirm', ['Reserved']);
  if (booking.paymentStatus !== 'NotRequired') {
    throw crmError('CRM_BOOKING_PAYMENT_REQUIRED', 'The booking program is paid: upload the contract and confirm the payment', {
      bookingId: booking.id,
      paymentStatus: booking.paymentStatus,
    });
  }
  requireReserveOpen(booking, now);
  return next(booking, 'confirm', { status: 'Booked', bookedAt: now, bookingExpiresAt: addHours(now, program.bookingDurationHours) }, now);
}

/**
 * AwaitingPayment → Booked (ConfirmPayment + ConfirmBooking): INV-BKG-4 the receipt is uploaded and
 * PaymentStatus becomes Paid; the reserve deadline still holds (INV-BKG-3/5: past it the worker wins).
 */
export function confirmPayment(booking: BookingRecord, program: ProgramTerms, now: Date): BookingTransition {
  requireStatus(booking, 'confirmPayment', ['AwaitingPayment']);
  if (booking.paymentStatus !== 'ReceiptUploaded' && booking.paymentStatus !== 'Paid') {
    throw crmError('CRM_BOOKING_RECEIPT_MISSING', 'No payment receipt is attached to this booking', {
      bookingId: booking.id,
      paymentStatus: booking.paymentStatus,
    });
  }
  requireReserveOpen(booking, now);
  return next(
    booking,
    'confirmPayment',
    { status: 'Booked', paymentStatus: 'Paid', bookedAt: now, bookingExpiresAt: addHours(now, program.bookingDurationHours) },
    now,
  );
}

/**
 * Booked → Booked (INV-BKG-6): BookingExpiresAt += BookingDurationHours, only while the booking still holds,
 * and at most the program's maxExtensions times (DESIGN decision 10: a booking cannot be pushed months ahead).
 */
export function extendBooking(booking: BookingRecord, program: ProgramTerms, now: Date): BookingTransition {
  requireStatus(booking, 'extend', ['Booked']);
  requireBookingOpen(booking, now);
  const maxExtensions = program.maxExtensions ?? DEFAULT_MAX_EXTENSIONS;
  if (booking.extensionCount >= maxExtensions) {
    throw crmError('CRM_BOOKING_EXTENSION_LIMIT_REACHED', `The booking was already extended ${booking.extensionCount} of ${maxExtensions} times`, {
      bookingId: booking.id, extensionCount: booking.extensionCount, maxExtensions,
    });
  }
  const current = booking.bookingExpiresAt ?? now;
  return next(booking, 'extend', { bookingExpiresAt: addHours(current, program.bookingDurationHours), extensionCount: booking.extensionCount + 1 }, now);
}

/** Booked → Completed (Deal.StartSale). INV-BKG-7: the caller changes the deal Booking → Sale in the same transaction. */
export function completeBooking(booking: BookingRecord, now: Date): BookingTransition {
  requireStatus(booking, 'startSale', ['Booked']);
  requireBookingOpen(booking, now);
  return next(booking, 'startSale', { status: 'Completed', closedAt: now, closedReason: 'sale-started' }, now);
}

/** Which timer of an active booking has lapsed at `now` (INV-BKG-5: strictly after the deadline), or null. */
export function expiryDue(booking: BookingRecord, now: Date): { phase: ExpiryPhase; deadline: Date } | null {
  if ((booking.status === 'Reserved' || booking.status === 'AwaitingPayment') && now.getTime() > booking.reserveExpiresAt.getTime()) {
    return { phase: 'Reserve', deadline: booking.reserveExpiresAt };
  }
  if (booking.status === 'Booked' && booking.bookingExpiresAt && now.getTime() > booking.bookingExpiresAt.getTime()) {
    return { phase: 'Booking', deadline: booking.bookingExpiresAt };
  }
  return null;
}

/**
 * Reserved/AwaitingPayment → ReserveExpired, Booked → BookingExpired (worker, INV-BKG-5). Idempotent by
 * state: a booking that is not due (already terminal, confirmed or extended meanwhile) is refused.
 */
export function expireBooking(booking: BookingRecord, now: Date): BookingTransition & { phase: ExpiryPhase; deadline: Date } {
  const due = expiryDue(booking, now);
  if (!due) invalidTransition(booking, 'expire');
  const status: BookingStatus = due.phase === 'Reserve' ? 'ReserveExpired' : 'BookingExpired';
  const reason = due.phase === 'Reserve' ? 'reserve-expired' : 'booking-expired';
  return { ...next(booking, 'expire', { status, closedAt: now, closedReason: reason }, now), ...due };
}

/** Any active status → Cancelled (INV-BKG-8: a terminal booking is immutable). */
export function cancelBooking(booking: BookingRecord, reason: string, now: Date): BookingTransition {
  requireStatus(booking, 'cancel', ACTIVE_STATUSES);
  return next(booking, 'cancel', { status: 'Cancelled', closedAt: now, closedReason: reason }, now);
}

/** The deadline that ends the booking's current phase (for lists: "expiring within N minutes"). */
export function currentDeadline(booking: Pick<BookingRecord, 'status' | 'reserveExpiresAt' | 'bookingExpiresAt'>): Date | null {
  if (booking.status === 'Reserved' || booking.status === 'AwaitingPayment') return booking.reserveExpiresAt;
  if (booking.status === 'Booked') return booking.bookingExpiresAt;
  return null;
}
