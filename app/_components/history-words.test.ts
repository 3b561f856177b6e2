import { describe, expect, it } from 'vitest';
import { PHASES } from '@/server/chessboard/property-object-hold-expiration.sql';
import { TOPICS } from '@/server/platform/kafka/topics';
import { historyHeadline, historyNote } from './history-words';

describe('historyNote', () => {
  it('reads what the crm consumer writes: the event, never the topic name', () => {
    // the writer: crm-property-object-status.consumer.ts, `${topic} ${step.transition}[: ${step.reason}]`
    expect(historyNote(`${TOPICS.bookingCreated} Reserve`)).toEqual({ kind: 'event', event: 'booking-created', takeOver: false });
    expect(historyNote(`${TOPICS.bookingExtended} Extend`)).toEqual({ kind: 'event', event: 'booking-extended', takeOver: false });
    expect(historyNote(`${TOPICS.dealSaleStarted} MarkSold`)).toEqual({ kind: 'event', event: 'deal-sale-started', takeOver: false });
    expect(historyNote(`${TOPICS.bookingCreated} Release: hold taken over from booking a of deal b by booking c of deal d (DESIGN decision 7)`))
      .toEqual({ kind: 'event', event: 'booking-created', takeOver: true });
  });

  it('reads the safety-net job: which timer expired', () => {
    expect(historyNote(`hold-expiration: ${PHASES.reserved.timerName} expired`)).toEqual({ kind: 'expired', timer: 'reserve' });
    expect(historyNote(`hold-expiration: ${PHASES.booked.timerName} expired`)).toEqual({ kind: 'expired', timer: 'booking' });
  });

  it('says nothing for the demo seed or an empty reason; people\'s words stay as they wrote them', () => {
    expect(historyNote('seed')).toEqual({ kind: 'none' });
    expect(historyNote(null)).toEqual({ kind: 'none' });
    expect(historyNote('  ')).toEqual({ kind: 'none' });
    expect(historyNote('Клиент подтвердил по телефону')).toEqual({ kind: 'text', text: 'Клиент подтвердил по телефону' });
    // a person may mention a topic; only the writer's exact shape is read as an event
    expect(historyNote('see pin.crm.booking-created.v1 in the DLQ')).toEqual({ kind: 'text', text: 'see pin.crm.booking-created.v1 in the DLQ' });
    expect(historyNote('pin.crm.unknown-thing.v1 Reserve').kind).toBe('text');
  });
});

describe('historyHeadline', () => {
  it('an extension keeps the status and says it was extended, not "Booked → Booked"', () => {
    expect(historyHeadline('Booked', 'Booked', historyNote(`${TOPICS.bookingExtended} Extend`))).toBe('extended');
    expect(historyHeadline('Reserved', 'Booked', historyNote(`${TOPICS.bookingConfirmed} Book`))).toBe('change');
    expect(historyHeadline('Hidden', 'Hidden', historyNote('re-hidden by ops'))).toBe('same');
  });
});
