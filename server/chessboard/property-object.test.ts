import { describe, expect, it } from 'vitest';
import {
  ALLOWED_TRANSITIONS, assertInvChs002, assertTransitionAllowed, book, createImported, decideCrmEvent, extend, markSold,
  PROPERTY_OBJECT_ERRORS, release, reserve, setHidden, type CrmBookingEvent, type PropertyObjectState, type PropertyObjectStatus,
  type StatusSource,
} from './property-object';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const T1 = new Date('2026-03-01T11:00:00.000Z');
const LATER = new Date('2026-03-03T10:00:00.000Z');
const DEAL = '11111111-1111-4111-8111-111111111111';
const OTHER_DEAL = '22222222-2222-4222-8222-222222222222';
const BOOKING = '33333333-3333-4333-8333-333333333333';
const OTHER_BOOKING = '44444444-4444-4444-8444-444444444444';

const free = (): PropertyObjectState => createImported('Free', T0);
const reserved = (deal = DEAL, bookingId: string | null = BOOKING) => reserve(free(), { dealId: deal, bookingId, reservedUntil: T1 }, T0);
const booked = (deal = DEAL, bookingId: string | null = BOOKING) => book(reserved(deal, bookingId), { dealId: deal, bookingId, bookedUntil: LATER }, T0);
const sold = () => markSold(booked(), T1, T1);
const hidden = () => createImported('Hidden', T0);

const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
};

const STATUSES: PropertyObjectStatus[] = ['Free', 'Reserved', 'Booked', 'Sold', 'Hidden'];
const SOURCES: StatusSource[] = ['Crm', 'ExpirationJob', 'Manual', 'Import'];

describe('INV-CHS-001: which status source may make which transition', () => {
  const allowed: Record<StatusSource, string[]> = {
    Crm: ['Free→Reserved', 'Reserved→Booked', 'Booked→Booked', 'Reserved→Free', 'Booked→Free', 'Booked→Sold'],
    ExpirationJob: ['Reserved→Free', 'Booked→Free'],
    Manual: ['Reserved→Free', 'Booked→Free', 'Free→Hidden', 'Hidden→Free'],
    Import: [],
  };
  for (const source of SOURCES) {
    for (const from of STATUSES) {
      for (const to of STATUSES) {
        const ok = allowed[source].includes(`${from}→${to}`);
        it(`${source}: ${from} → ${to} is ${ok ? 'allowed' : 'refused'}`, () => {
          expect(code(() => assertTransitionAllowed(from, to, source))).toBe(ok ? undefined : PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
        });
      }
    }
  }

  it('the table is exactly the one above', () => {
    for (const source of SOURCES) expect(ALLOWED_TRANSITIONS[source].map(([f, t]) => `${f}→${t}`).sort()).toEqual([...allowed[source]].sort());
  });

  it('catch-up moves (DESIGN 3) are allowed for Crm only when flagged, never for other sources', () => {
    for (const [from, to] of [['Free', 'Booked'], ['Free', 'Sold'], ['Reserved', 'Sold']] as const) {
      expect(code(() => assertTransitionAllowed(from, to, 'Crm'))).toBe(PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
      expect(code(() => assertTransitionAllowed(from, to, 'Crm', { catchUp: true }))).toBeUndefined();
      expect(code(() => assertTransitionAllowed(from, to, 'Manual', { catchUp: true }))).toBe(PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
    }
    expect(code(() => assertTransitionAllowed('Sold', 'Free', 'Crm', { catchUp: true }))).toBe(PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
  });

  it('ExpirationJob cannot reserve, book, sell or hide', () => {
    expect(code(() => release(free(), 'ExpirationJob', T1))).toBe(PROPERTY_OBJECT_ERRORS.NOT_HELD);
    expect(code(() => release(sold(), 'ExpirationJob', T1))).toBe(PROPERTY_OBJECT_ERRORS.NOT_HELD);
    expect(code(() => release(hidden(), 'ExpirationJob', T1))).toBe(PROPERTY_OBJECT_ERRORS.NOT_HELD);
  });
});

describe('transitions keep INV-CHS-002 and bump the version', () => {
  it('Import creates Free or Hidden at version 1', () => {
    expect(createImported('Free', T0)).toMatchObject({ status: 'Free', statusSource: 'Import', version: 1, holdDealId: null });
    expect(createImported('Hidden', T0)).toMatchObject({ status: 'Hidden', statusSource: 'Import', version: 1 });
  });

  it('Reserve sets reserved_until and the hold deal/booking', () => {
    const s = reserved();
    expect(s).toMatchObject({ status: 'Reserved', reservedUntil: T1, bookedUntil: null, holdDealId: DEAL, holdBookingId: BOOKING, statusSource: 'Crm', statusChangedAt: T0, version: 2 });
  });

  it('Book moves the timer to booked_until and clears reserved_until', () => {
    expect(booked()).toMatchObject({ status: 'Booked', reservedUntil: null, bookedUntil: LATER, holdDealId: DEAL, version: 3 });
  });

  it('Extend moves booked_until only (status_changed_at unchanged)', () => {
    const b = booked();
    const e = extend(b, new Date('2026-03-05T10:00:00Z'), T1);
    expect(e).toMatchObject({ status: 'Booked', bookedUntil: new Date('2026-03-05T10:00:00Z'), statusChangedAt: b.statusChangedAt, updatedAt: T1, version: b.version + 1 });
  });

  it('Release clears timers and hold for Crm, ExpirationJob and Manual', () => {
    for (const source of ['Crm', 'ExpirationJob', 'Manual'] as const) {
      for (const s of [reserved(), booked()]) {
        const r = release(s, source, T1);
        expect(r).toMatchObject({ status: 'Free', reservedUntil: null, bookedUntil: null, holdDealId: null, holdBookingId: null, statusSource: source, statusChangedAt: T1, updatedAt: T1, version: s.version + 1 });
      }
    }
    expect(code(() => release(reserved(), 'Import', T1))).toBe(PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
  });

  it('MarkSold sets sold_at and clears timers and hold', () => {
    expect(sold()).toMatchObject({ status: 'Sold', soldAt: T1, bookedUntil: null, holdDealId: null, holdBookingId: null });
    expect(code(() => markSold(reserved(), T1, T1))).toBe(PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
  });

  it('Manual hides a Free object and shows a Hidden one, nothing else', () => {
    expect(setHidden(free(), true, T1)).toMatchObject({ status: 'Hidden', statusSource: 'Manual' });
    expect(setHidden(hidden(), false, T1)).toMatchObject({ status: 'Free', statusSource: 'Manual' });
    expect(code(() => setHidden(reserved(), true, T1))).toBe(PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
    expect(code(() => setHidden(sold(), true, T1))).toBe(PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
  });

  it('INV-CHS-002 check refuses inconsistent states', () => {
    const ok = { status: 'Reserved' as const, reservedUntil: T1, bookedUntil: null, holdDealId: DEAL, holdBookingId: null };
    expect(code(() => assertInvChs002(ok))).toBeUndefined();
    expect(code(() => assertInvChs002({ ...ok, holdDealId: null }))).toBe(PROPERTY_OBJECT_ERRORS.INVARIANT_VIOLATED);
    expect(code(() => assertInvChs002({ ...ok, bookedUntil: T1 }))).toBe(PROPERTY_OBJECT_ERRORS.INVARIANT_VIOLATED);
    expect(code(() => assertInvChs002({ ...ok, status: 'Free' }))).toBe(PROPERTY_OBJECT_ERRORS.INVARIANT_VIOLATED);
    expect(code(() => assertInvChs002({ status: 'Free', reservedUntil: null, bookedUntil: null, holdDealId: null, holdBookingId: BOOKING }))).toBe(PROPERTY_OBJECT_ERRORS.INVARIANT_VIOLATED);
  });
});

describe('decideCrmEvent (consumer rules)', () => {
  const ev = (kind: CrmBookingEvent['kind'], over: Partial<CrmBookingEvent> = {}): CrmBookingEvent => ({
    kind, bookingId: BOOKING, dealId: DEAL, bookingVersion: 2, reservedUntil: T1, bookedUntil: LATER, soldAt: T1, ...over,
  });
  const transitions = (d: ReturnType<typeof decideCrmEvent>) => (d.kind === 'apply' ? d.steps.map((s) => `${s.transition}:${s.from.status}→${s.to.status}`) : d.kind);

  it('maps each event to its transition', () => {
    expect(transitions(decideCrmEvent(free(), null, ev('created', { bookingVersion: 1 }), T0))).toEqual(['Reserve:Free→Reserved']);
    expect(transitions(decideCrmEvent(reserved(), { appliedVersion: 1, released: false }, ev('confirmed'), T0))).toEqual(['Book:Reserved→Booked']);
    expect(transitions(decideCrmEvent(booked(), { appliedVersion: 2, released: false }, ev('extended', { bookingVersion: 3 }), T0))).toEqual(['Extend:Booked→Booked']);
    expect(transitions(decideCrmEvent(reserved(), { appliedVersion: 1, released: false }, ev('released'), T0))).toEqual(['Release:Reserved→Free']);
    expect(transitions(decideCrmEvent(booked(), { appliedVersion: 2, released: false }, ev('released', { bookingVersion: 3 }), T0))).toEqual(['Release:Booked→Free']);
    expect(transitions(decideCrmEvent(booked(), { appliedVersion: 2, released: false }, ev('sale-started', { bookingVersion: 3 }), T0))).toEqual(['MarkSold:Booked→Sold']);
  });

  it('INV-CHS-003: an event of another deal that no order explains is a HOLD_MISMATCH, for every kind', () => {
    for (const kind of ['created', 'confirmed', 'extended', 'released', 'sale-started'] as const) {
      // nothing places the event's booking in time against the holder
      const d = decideCrmEvent(reserved(OTHER_DEAL, OTHER_BOOKING), null, ev(kind), T0);
      expect(d, kind).toMatchObject({ kind: 'reject', code: PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH });
      // two holders created at the same time
      const same = decideCrmEvent(reserved(OTHER_DEAL, OTHER_BOOKING), null, ev(kind, { bookingCreatedAt: T0 }), T0, { appliedVersion: 1, released: false, bookingCreatedAt: T0 });
      expect(same, kind).toMatchObject({ kind: 'reject', code: PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH, detail: expect.stringContaining('same time') });
    }
  });

  describe('DESIGN decision 9: the newer booking takes the hold over in the state its event carries', () => {
    const holderRecord = { appliedVersion: 2, released: false, bookingCreatedAt: T0 };
    const newer = new Date(T0.getTime() + 60_000);
    const older = new Date(T0.getTime() - 60_000);
    const expected: Record<CrmBookingEvent['kind'], { transitions: string[]; to: Partial<PropertyObjectState> }> = {
      created: { transitions: ['Release:Booked→Free', 'Reserve:Free→Reserved'], to: { status: 'Reserved', reservedUntil: T1, holdDealId: DEAL, holdBookingId: BOOKING } },
      confirmed: { transitions: ['Release:Booked→Free', 'Book:Free→Booked'], to: { status: 'Booked', bookedUntil: LATER, holdDealId: DEAL, holdBookingId: BOOKING } },
      extended: { transitions: ['Release:Booked→Free', 'Book:Free→Booked'], to: { status: 'Booked', bookedUntil: LATER, holdDealId: DEAL, holdBookingId: BOOKING } },
      'sale-started': { transitions: ['Release:Booked→Free', 'MarkSold:Free→Sold'], to: { status: 'Sold', soldAt: T1, holdDealId: null } },
      released: { transitions: ['Release:Booked→Free'], to: { status: 'Free', holdDealId: null } },
    };
    for (const kind of Object.keys(expected) as CrmBookingEvent['kind'][]) {
      it(`${kind} of a newer booking (another deal or the same one)`, () => {
        for (const holderDeal of [OTHER_DEAL, DEAL]) {
          const d = decideCrmEvent(booked(holderDeal, OTHER_BOOKING), null, ev(kind, { bookingCreatedAt: newer }), T0, holderRecord);
          expect(transitions(d), `${kind} / ${holderDeal}`).toEqual(expected[kind].transitions);
          expect(d.kind === 'apply' && d.steps.at(-1)!.to).toMatchObject(expected[kind].to);
          expect(d.kind === 'apply' && d.releasedBookings).toEqual([{ bookingId: OTHER_BOOKING, dealId: holderDeal }]);
        }
      });
      it(`${kind} of an older booking is a logged no-op that leaves a tombstone`, () => {
        const d = decideCrmEvent(booked(OTHER_DEAL, OTHER_BOOKING), null, ev(kind, { bookingCreatedAt: older }), T0, holderRecord);
        expect(d).toMatchObject({ kind: 'no-op', record: true, releasesBooking: true, reason: expect.stringContaining('older than') });
      });
    }

    it('the creation time is read from the booking\'s record when the event does not carry it; a create stands for its own time', () => {
      expect(transitions(decideCrmEvent(booked(OTHER_DEAL, OTHER_BOOKING), { appliedVersion: 1, released: false, bookingCreatedAt: newer }, ev('confirmed'), T0, holderRecord)))
        .toEqual(['Release:Booked→Free', 'Book:Free→Booked']);
      expect(decideCrmEvent(booked(OTHER_DEAL, OTHER_BOOKING), null, ev('created', { bookingVersion: 1, occurredAt: older }), T0, holderRecord)).toMatchObject({ kind: 'no-op' });
    });

    it('a Free object: an older booking than the newest recorded one does not re-hold it; a newer one does', () => {
      const newest = { appliedVersion: 3, released: true, bookingCreatedAt: T0 };
      expect(decideCrmEvent(free(), null, ev('created', { bookingVersion: 1, bookingCreatedAt: older }), T0, newest)).toMatchObject({ kind: 'no-op', releasesBooking: true });
      expect(decideCrmEvent(free(), null, ev('confirmed', { bookingCreatedAt: older }), T0, newest)).toMatchObject({ kind: 'no-op', releasesBooking: true });
      expect(transitions(decideCrmEvent(free(), null, ev('confirmed', { bookingCreatedAt: newer }), T0, newest))).toEqual(['Book:Free→Booked']);
    });

    it('a Sold object: an older booking\'s late event is a no-op; a newer booking\'s (no order explains it) is NOT_AVAILABLE', () => {
      const seller = { appliedVersion: 4, released: false, bookingCreatedAt: T0 };
      expect(decideCrmEvent(sold(), null, ev('created', { bookingVersion: 1, bookingCreatedAt: older }), T0, seller)).toMatchObject({ kind: 'no-op' });
      expect(decideCrmEvent(sold(), null, ev('created', { bookingVersion: 1, bookingCreatedAt: newer }), T0, seller))
        .toMatchObject({ kind: 'reject', code: PROPERTY_OBJECT_ERRORS.NOT_AVAILABLE });
    });
  });

  it('a release of a Free object is an idempotent no-op that leaves a tombstone, not a mismatch', () => {
    expect(decideCrmEvent(free(), null, ev('released'), T0)).toMatchObject({ kind: 'no-op', record: true, releasesBooking: true });
  });

  it('DESIGN 3: a stale bookingVersion and any event of a released booking are no-ops', () => {
    expect(decideCrmEvent(booked(), { appliedVersion: 2, released: false }, ev('confirmed', { bookingVersion: 2 }), T0)).toMatchObject({ kind: 'no-op', record: false });
    expect(decideCrmEvent(booked(), { appliedVersion: 3, released: false }, ev('released', { bookingVersion: 2 }), T0)).toMatchObject({ kind: 'no-op' });
    expect(decideCrmEvent(free(), { appliedVersion: 2, released: true }, ev('created', { bookingVersion: 1 }), T0)).toMatchObject({ kind: 'no-op', record: false });
  });

  it('a release for a Hidden object (its booking never held it) is a no-op that ends the booking, not a refusal', () => {
    expect(decideCrmEvent(hidden(), null, ev('released'), T0)).toMatchObject({ kind: 'no-op', releasesBooking: true });
  });

  it('Reserve of a Sold or Hidden object is NOT_AVAILABLE', () => {
    expect(decideCrmEvent(sold(), null, ev('created'), T0)).toMatchObject({ kind: 'reject', code: PROPERTY_OBJECT_ERRORS.NOT_AVAILABLE });
    expect(decideCrmEvent(hidden(), null, ev('created'), T0)).toMatchObject({ kind: 'reject', code: PROPERTY_OBJECT_ERRORS.NOT_AVAILABLE });
  });

  it('catch-up: a confirm that overtook its create books a Free object directly', () => {
    const d = decideCrmEvent(free(), null, ev('confirmed'), T0);
    expect(transitions(d)).toEqual(['Book:Free→Booked']);
    expect(d.kind === 'apply' && d.steps[0].to).toMatchObject({ holdDealId: DEAL, holdBookingId: BOOKING, bookedUntil: LATER });
  });

  it('a stale release of an earlier booking of the same deal is a no-op; a newer booking supersedes the hold', () => {
    const heldByOld = reserved(DEAL, OTHER_BOOKING);
    const holder = { appliedVersion: 1, released: false, bookingCreatedAt: T0 };
    expect(decideCrmEvent(heldByOld, null, ev('released', { bookingCreatedAt: new Date(T0.getTime() - 1) }), T0, holder)).toMatchObject({ kind: 'no-op', releasesBooking: true });
    const d = decideCrmEvent(heldByOld, null, ev('created', { bookingVersion: 1, bookingCreatedAt: new Date(T0.getTime() + 1) }), T0, holder);
    expect(transitions(d)).toEqual(['Release:Reserved→Free', 'Reserve:Free→Reserved']);
    expect(d.kind === 'apply' && d.releasedBookings).toEqual([{ bookingId: OTHER_BOOKING, dealId: DEAL }]);
  });

  it('holds seeded without a booking id are owned by the deal', () => {
    expect(transitions(decideCrmEvent(reserved(DEAL, null), null, ev('confirmed'), T0))).toEqual(['Book:Reserved→Booked']);
  });
});
