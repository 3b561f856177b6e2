import { describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors';
import {
  cancelBooking, completeBooking, confirmBooking, confirmPayment, createBooking, expireBooking, expiryDue, extendBooking, uploadContract,
  uploadReceipt, type BookingRecord, type BookingStatus, type BookingTransition, type PaymentStatus, type ProgramTerms,
} from './booking';
import { cancelDeal, onBookingCreated, onBookingReleased, startSale } from './deal';
import { CRM_ERRORS } from './errors';
import { BOOKING_STATUSES } from './schema';

/** Pure domain tests of the saga's state machine (crm-booking-saga, State Machine table). */

const T0 = new Date('2026-03-01T10:00:00.000Z');
const MIN = 60_000;
const HOUR = 3_600_000;
const at = (ms: number) => new Date(T0.getTime() + ms);

const FREE: ProgramTerms = { id: '00000000-0000-4000-8000-0000000000f1', isPaid: false, reserveDurationMinutes: 60, bookingDurationHours: 48 };
const PAID: ProgramTerms = { ...FREE, id: '00000000-0000-4000-8000-0000000000f2', isPaid: true };

function booking(status: BookingStatus, paymentStatus: PaymentStatus, extra: Partial<BookingRecord> = {}): BookingRecord {
  const booked = status === 'Booked' || status === 'Completed' || status === 'BookingExpired';
  return {
    id: '00000000-0000-4000-8000-000000000b01',
    tenantId: '00000000-0000-4000-8000-000000000001',
    dealId: '00000000-0000-4000-8000-000000000d01',
    propertyObjectId: '00000000-0000-4000-8000-000000000a01',
    programId: paymentStatus === 'NotRequired' ? FREE.id : PAID.id,
    status,
    reserveExpiresAt: at(60 * MIN),
    bookingExpiresAt: booked ? at(10 * MIN + 48 * HOUR) : null,
    bookedAt: booked ? at(10 * MIN) : null,
    paymentStatus,
    contractDocument: null,
    receiptDocument: null,
    requisiteSetId: '00000000-0000-4000-8000-0000000000c1',
    requisiteSetVersion: 1,
    createdBy: '00000000-0000-4000-8000-0000000000a9',
    closedReason: null,
    closedAt: null,
    extensionCount: 0,
    version: 3,
    createdAt: T0,
    updatedAt: T0,
    ...extra,
  };
}

type Action = 'uploadContract' | 'uploadReceipt' | 'confirm' | 'confirmPayment' | 'extend' | 'startSale' | 'expire' | 'cancel';
const ACTIONS: Action[] = ['uploadContract', 'uploadReceipt', 'confirm', 'confirmPayment', 'extend', 'startSale', 'expire', 'cancel'];

/** `now` per action: inside every window, except expire which runs after the deadline of the booking's phase. */
function apply(b: BookingRecord, action: Action): BookingTransition {
  const inside = at(30 * MIN);
  const program = b.paymentStatus === 'NotRequired' ? FREE : PAID;
  switch (action) {
    case 'uploadContract': return uploadContract(b, 'doc://contract', inside);
    case 'uploadReceipt': return uploadReceipt(b, 'doc://receipt', inside);
    case 'confirm': return confirmBooking(b, program, inside);
    case 'confirmPayment': return confirmPayment(b, program, inside);
    case 'extend': return extendBooking(b, program, inside);
    case 'startSale': return completeBooking(b, inside);
    case 'cancel': return cancelBooking(b, 'client changed their mind', inside);
    case 'expire': {
      const deadline = b.status === 'Booked' ? b.bookingExpiresAt! : b.reserveExpiresAt;
      return expireBooking(b, new Date(deadline.getTime() + 1));
    }
  }
}

type Expected = BookingStatus | `CRM_${string}`;
interface Row { status: BookingStatus; payment: PaymentStatus; expect: Record<Action, Expected> }

const INVALID = 'CRM_BOOKING_INVALID_TRANSITION';
const allInvalid = Object.fromEntries(ACTIONS.map((a) => [a, INVALID])) as unknown as Record<Action, Expected>;

/** Every status × every action: the allowed transitions of the saga table, a typed error for the rest. */
const TABLE: Row[] = [
  {
    status: 'Reserved', payment: 'NotRequired',
    expect: { ...allInvalid, uploadContract: 'CRM_BOOKING_PROGRAM_NOT_PAID', confirm: 'Booked', expire: 'ReserveExpired', cancel: 'Cancelled' },
  },
  {
    status: 'Reserved', payment: 'Pending',
    expect: { ...allInvalid, uploadContract: 'AwaitingPayment', confirm: 'CRM_BOOKING_PAYMENT_REQUIRED', expire: 'ReserveExpired', cancel: 'Cancelled' },
  },
  {
    status: 'AwaitingPayment', payment: 'ContractUploaded',
    expect: { ...allInvalid, uploadReceipt: 'AwaitingPayment', confirmPayment: 'CRM_BOOKING_RECEIPT_MISSING', expire: 'ReserveExpired', cancel: 'Cancelled' },
  },
  {
    status: 'AwaitingPayment', payment: 'ReceiptUploaded',
    expect: { ...allInvalid, uploadReceipt: 'AwaitingPayment', confirmPayment: 'Booked', expire: 'ReserveExpired', cancel: 'Cancelled' },
  },
  { status: 'Booked', payment: 'NotRequired', expect: { ...allInvalid, extend: 'Booked', startSale: 'Completed', expire: 'BookingExpired', cancel: 'Cancelled' } },
  { status: 'Booked', payment: 'Paid', expect: { ...allInvalid, extend: 'Booked', startSale: 'Completed', expire: 'BookingExpired', cancel: 'Cancelled' } },
  // INV-BKG-8: terminal statuses are immutable
  { status: 'Completed', payment: 'NotRequired', expect: allInvalid },
  { status: 'Cancelled', payment: 'Pending', expect: allInvalid },
  {
    status: 'ReserveExpired', payment: 'ContractUploaded',
    expect: {
      ...allInvalid,
      uploadContract: 'CRM_BOOKING_RESERVE_EXPIRED', uploadReceipt: 'CRM_BOOKING_RESERVE_EXPIRED',
      confirm: 'CRM_BOOKING_RESERVE_EXPIRED', confirmPayment: 'CRM_BOOKING_RESERVE_EXPIRED',
    },
  },
  { status: 'BookingExpired', payment: 'NotRequired', expect: { ...allInvalid, extend: 'CRM_BOOKING_BOOKING_EXPIRED', startSale: 'CRM_BOOKING_BOOKING_EXPIRED' } },
];

describe('BookingEntity state machine (saga table)', () => {
  const cases = TABLE.flatMap((row) => ACTIONS.map((action) => ({ ...row, action, expected: row.expect[action] })));

  it.each(cases)('$status ($payment) --$action--> $expected', ({ status, payment, action, expected }) => {
    const before = booking(status, payment);
    if (expected.startsWith('CRM_')) {
      let error: unknown;
      try {
        apply(before, action);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe(expected);
      expect((error as AppError).kind).toBe(CRM_ERRORS[expected as keyof typeof CRM_ERRORS]);
    } else {
      const t = apply(before, action);
      expect(t.from).toBe(status);
      expect(t.to).toBe(expected);
      expect(t.booking.status).toBe(expected);
      expect(t.booking.version).toBe(before.version + 1);
      // the input state is not mutated (pure)
      expect(before.status).toBe(status);
      expect(before.version).toBe(3);
    }
  });

  it('covers every status of the aggregate', () => {
    const statuses = new Set(TABLE.map((r) => r.status));
    expect([...statuses].sort()).toEqual([...BOOKING_STATUSES].sort());
  });
});

describe('create (INV-BKG-2)', () => {
  const base = { id: '00000000-0000-4000-8000-000000000b02', propertyObjectId: '00000000-0000-4000-8000-000000000a02', createdBy: null, now: T0 };
  const deal = (status: 'Draft' | 'Application' | 'Booking' | 'Sale' | 'Cancelled') => ({ id: '00000000-0000-4000-8000-000000000d02', tenantId: '00000000-0000-4000-8000-000000000001', status });

  it('rejects a Draft deal: the developer is not engaged', () => {
    expect(() => createBooking({ ...base, deal: deal('Draft'), program: FREE })).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_DEAL_NOT_ENGAGED', kind: 'PRECONDITION_FAILED' }));
  });
  it.each(['Sale', 'Cancelled'] as const)('rejects a %s deal', (status) => {
    expect(() => createBooking({ ...base, deal: deal(status), program: FREE })).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_DEAL_CLOSED' }));
  });
  it.each(['Application', 'Booking'] as const)('reserves for an engaged %s deal: ReserveExpiresAt = CreatedAt + ReserveDurationMinutes', (status) => {
    const t = createBooking({ ...base, deal: deal(status), program: { ...FREE, reserveDurationMinutes: 15 } });
    expect(t.from).toBeNull();
    expect(t.booking).toMatchObject({ status: 'Reserved', version: 1, paymentStatus: 'NotRequired', bookingExpiresAt: null, tenantId: deal(status).tenantId });
    expect(t.booking.reserveExpiresAt.toISOString()).toBe(at(15 * MIN).toISOString());
  });
  it('a paid program starts with PaymentStatus Pending; the default reserve is 60 minutes', () => {
    const t = createBooking({ ...base, deal: deal('Application'), program: { ...PAID, reserveDurationMinutes: 0 } });
    expect(t.booking.paymentStatus).toBe('Pending');
    expect(t.booking.reserveExpiresAt.toISOString()).toBe(at(60 * MIN).toISOString());
  });
});

describe('timers', () => {
  it('INV-BKG-3: confirm at exactly ReserveExpiresAt passes, 1 ms later is CRM_BOOKING_RESERVE_EXPIRED', () => {
    const b = booking('Reserved', 'NotRequired');
    const t = confirmBooking(b, FREE, b.reserveExpiresAt);
    expect(t.booking.bookedAt).toEqual(b.reserveExpiresAt);
    // BookingExpiresAt = BookedAt + BookingDurationHours
    expect(t.booking.bookingExpiresAt!.getTime()).toBe(b.reserveExpiresAt.getTime() + 48 * HOUR);
    expect(() => confirmBooking(b, FREE, new Date(b.reserveExpiresAt.getTime() + 1))).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_RESERVE_EXPIRED' }));
  });

  it('INV-BKG-4: confirmPayment needs the receipt, sets Paid and starts the booking timer; past the reserve it is refused', () => {
    const b = booking('AwaitingPayment', 'ReceiptUploaded');
    const t = confirmPayment(b, { ...PAID, bookingDurationHours: 24 }, at(20 * MIN));
    expect(t.booking).toMatchObject({ status: 'Booked', paymentStatus: 'Paid', bookedAt: at(20 * MIN) });
    expect(t.booking.bookingExpiresAt).toEqual(at(20 * MIN + 24 * HOUR));
    expect(() => confirmPayment(b, PAID, new Date(b.reserveExpiresAt.getTime() + 1))).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_RESERVE_EXPIRED' }));
  });

  it('INV-BKG-6: extend adds BookingDurationHours to the current BookingExpiresAt, repeatedly', () => {
    const b = booking('Booked', 'NotRequired');
    const once = extendBooking(b, FREE, at(HOUR));
    const twice = extendBooking(once.booking, FREE, at(2 * HOUR));
    expect(once.booking.bookingExpiresAt!.getTime()).toBe(b.bookingExpiresAt!.getTime() + 48 * HOUR);
    expect(twice.booking.bookingExpiresAt!.getTime()).toBe(b.bookingExpiresAt!.getTime() + 96 * HOUR);
    expect(twice.booking.version).toBe(5);
  });

  it('DESIGN decision 10: extend stops at the program\'s maxExtensions with CRM_BOOKING_EXTENSION_LIMIT_REACHED; 0 forbids extending', () => {
    const b = booking('Booked', 'NotRequired');
    const once = extendBooking(b, { ...FREE, maxExtensions: 2 }, at(HOUR));
    const twice = extendBooking(once.booking, { ...FREE, maxExtensions: 2 }, at(2 * HOUR));
    expect([once.booking.extensionCount, twice.booking.extensionCount]).toEqual([1, 2]);
    expect(() => extendBooking(twice.booking, { ...FREE, maxExtensions: 2 }, at(3 * HOUR)))
      .toThrow(expect.objectContaining({ code: 'CRM_BOOKING_EXTENSION_LIMIT_REACHED', details: expect.objectContaining({ extensionCount: 2, maxExtensions: 2 }) }));
    expect(() => extendBooking(b, { ...FREE, maxExtensions: 0 }, at(HOUR))).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_EXTENSION_LIMIT_REACHED' }));
  });

  it('a Booked booking past BookingExpiresAt cannot be extended or sold: the worker owns it', () => {
    const b = booking('Booked', 'NotRequired');
    const late = new Date(b.bookingExpiresAt!.getTime() + 1);
    expect(() => extendBooking(b, FREE, late)).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_BOOKING_EXPIRED' }));
    expect(() => completeBooking(b, late)).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_BOOKING_EXPIRED' }));
    expect(extendBooking(b, FREE, b.bookingExpiresAt!).to).toBe('Booked');
  });

  it('INV-BKG-5: expiry is due strictly after the deadline, with its phase', () => {
    const reserved = booking('Reserved', 'NotRequired');
    expect(expiryDue(reserved, reserved.reserveExpiresAt)).toBeNull();
    expect(() => expireBooking(reserved, reserved.reserveExpiresAt)).toThrow(expect.objectContaining({ code: INVALID }));
    const due = new Date(reserved.reserveExpiresAt.getTime() + 1);
    expect(expiryDue(reserved, due)).toEqual({ phase: 'Reserve', deadline: reserved.reserveExpiresAt });
    const expired = expireBooking(reserved, due);
    expect(expired).toMatchObject({ phase: 'Reserve', to: 'ReserveExpired' });
    expect(expired.booking).toMatchObject({ closedAt: due, closedReason: 'reserve-expired' });

    const awaiting = booking('AwaitingPayment', 'ReceiptUploaded');
    expect(expireBooking(awaiting, due)).toMatchObject({ phase: 'Reserve', to: 'ReserveExpired' });

    const booked = booking('Booked', 'Paid');
    // a Booked booking no longer cares about the reserve deadline
    expect(expiryDue(booked, due)).toBeNull();
    const bookedDue = new Date(booked.bookingExpiresAt!.getTime() + 1);
    expect(expireBooking(booked, bookedDue)).toMatchObject({ phase: 'Booking', to: 'BookingExpired', deadline: booked.bookingExpiresAt });
  });

  it('INV-BKG-8: expiry is idempotent by state — a terminal booking is never due', () => {
    for (const status of ['Completed', 'ReserveExpired', 'BookingExpired', 'Cancelled'] as const) {
      expect(expiryDue(booking(status, 'NotRequired'), at(1000 * HOUR))).toBeNull();
    }
  });

  it('upload of contract and receipt is refused after the reserve deadline', () => {
    const late = new Date(at(60 * MIN).getTime() + 1);
    expect(() => uploadContract(booking('Reserved', 'Pending'), 'doc', late)).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_RESERVE_EXPIRED' }));
    expect(() => uploadReceipt(booking('AwaitingPayment', 'ContractUploaded'), 'doc', late)).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_RESERVE_EXPIRED' }));
  });

  it('uploads keep the document references and move PaymentStatus', () => {
    const contract = uploadContract(booking('Reserved', 'Pending'), 'doc://c', at(MIN));
    expect(contract.booking).toMatchObject({ status: 'AwaitingPayment', paymentStatus: 'ContractUploaded', contractDocument: 'doc://c' });
    const receipt = uploadReceipt(contract.booking, 'doc://r', at(2 * MIN));
    expect(receipt.booking).toMatchObject({ status: 'AwaitingPayment', paymentStatus: 'ReceiptUploaded', receiptDocument: 'doc://r', version: 5 });
  });

  it('a paid booking needs the buyer\'s requisites before the contract: given at create or with the contract', () => {
    const bare = booking('Reserved', 'Pending', { requisiteSetId: null, requisiteSetVersion: null });
    expect(() => uploadContract(bare, 'doc://c', at(MIN))).toThrow(expect.objectContaining({ code: 'CRM_BOOKING_REQUISITES_REQUIRED' }));
    const withSet = uploadContract(bare, 'doc://c', at(MIN), { setId: '00000000-0000-4000-8000-0000000000c2', version: 3 });
    expect(withSet.booking).toMatchObject({ status: 'AwaitingPayment', requisiteSetId: '00000000-0000-4000-8000-0000000000c2', requisiteSetVersion: 3 });
    // a set given at create is kept
    const kept = uploadContract(booking('Reserved', 'Pending'), 'doc://c', at(MIN));
    expect(kept.booking).toMatchObject({ requisiteSetId: '00000000-0000-4000-8000-0000000000c1', requisiteSetVersion: 1 });
    // the free program needs none
    expect(confirmBooking(booking('Reserved', 'NotRequired', { requisiteSetId: null, requisiteSetVersion: null }), FREE, at(MIN)).booking.status).toBe('Booked');
  });

  it('cancel records the reason and the time; startSale closes the booking', () => {
    const c = cancelBooking(booking('Booked', 'Paid'), 'deal lost', at(MIN));
    expect(c.booking).toMatchObject({ status: 'Cancelled', closedReason: 'deal lost', closedAt: at(MIN) });
    const s = completeBooking(booking('Booked', 'Paid'), at(MIN));
    expect(s.booking).toMatchObject({ status: 'Completed', closedAt: at(MIN) });
  });
});

describe('deal projection (DESIGN decision 5)', () => {
  it('booking created moves Application → Booking, and leaves Booking as it is', () => {
    expect(onBookingCreated({ status: 'Application' })).toEqual({ from: 'Application', to: 'Booking' });
    expect(onBookingCreated({ status: 'Booking' })).toBeNull();
  });
  it('a released booking moves the deal back to Application only when no other booking of it is active', () => {
    expect(onBookingReleased({ status: 'Booking' }, 0)).toEqual({ from: 'Booking', to: 'Application' });
    expect(onBookingReleased({ status: 'Booking' }, 1)).toBeNull();
    expect(onBookingReleased({ status: 'Cancelled' }, 0)).toBeNull();
  });
  it('INV-BKG-7: StartSale moves Booking → Sale; any other status is refused', () => {
    expect(startSale({ id: 'd', status: 'Booking' })).toEqual({ from: 'Booking', to: 'Sale' });
    for (const status of ['Draft', 'Application', 'Sale', 'Cancelled'] as const) {
      expect(() => startSale({ id: 'd', status })).toThrow(expect.objectContaining({ code: 'CRM_DEAL_INVALID_TRANSITION', kind: 'CONFLICT' }));
    }
  });
  it('Deal.Cancel: open deals become Cancelled; Sale and Cancelled are final', () => {
    for (const status of ['Draft', 'Application', 'Booking'] as const) expect(cancelDeal({ id: 'd', status })).toEqual({ from: status, to: 'Cancelled' });
    for (const status of ['Sale', 'Cancelled'] as const) {
      expect(() => cancelDeal({ id: 'd', status })).toThrow(expect.objectContaining({ code: 'CRM_DEAL_INVALID_TRANSITION' }));
    }
  });
});
