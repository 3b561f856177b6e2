/**
 * What a status-history row of an object says, in a shape the drawer can put into words. The history's
 * `reason` column is written by machines as well as by people: the crm consumer writes
 * "<topic> <transition>[: <detail>]", the safety-net job "hold-expiration: <timer> expired", the demo
 * seed "seed"; operators write their own words. Users saw those strings raw ("pin.crm.booking-created.v1
 * Reserve", "seed", "Бронь → Бронь" for an extension) — this tells them apart so only people's words
 * are shown as text and the rest is said in the dictionary's words.
 */
export type HistoryNote =
  | { kind: 'event'; event: CrmEvent; takeOver: boolean }
  | { kind: 'expired'; timer: 'reserve' | 'booking' }
  | { kind: 'none' }
  | { kind: 'text'; text: string };

export const CRM_EVENTS = ['booking-created', 'booking-confirmed', 'booking-paid', 'booking-extended', 'booking-expired', 'booking-cancelled', 'deal-cancelled', 'deal-sale-started'] as const;
export type CrmEvent = (typeof CRM_EVENTS)[number];

const CRM_REASON = /^pin\.crm\.([a-z-]+)\.v\d+ (Reserve|Book|Extend|Release|MarkSold)(?:: (.*))?$/s;
const EXPIRED_REASON = /^hold-expiration: (ReservedUntil|BookedUntil) expired$/;

export function historyNote(reason: string | null | undefined): HistoryNote {
  const text = reason?.trim() ?? '';
  if (!text || text === 'seed') return { kind: 'none' };
  const crm = CRM_REASON.exec(text);
  if (crm && (CRM_EVENTS as readonly string[]).includes(crm[1])) {
    return { kind: 'event', event: crm[1] as CrmEvent, takeOver: /taken over/.test(crm[3] ?? '') };
  }
  const expired = EXPIRED_REASON.exec(text);
  if (expired) return { kind: 'expired', timer: expired[1] === 'ReservedUntil' ? 'reserve' : 'booking' };
  return { kind: 'text', text };
}

/** The headline of a row: "Reserved → Booked", but an extension keeps the status, so it says so. */
export function historyHeadline(fromStatus: string, toStatus: string, note: HistoryNote): 'extended' | 'same' | 'change' {
  if (fromStatus !== toStatus) return 'change';
  return note.kind === 'event' && note.event === 'booking-extended' ? 'extended' : 'same';
}
