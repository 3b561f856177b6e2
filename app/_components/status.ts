/**
 * Sale status of a property object: colour from the Okabe–Ito palette (distinguishable with the common
 * colour-vision deficiencies) AND a glyph, so the status never relies on colour alone.
 */
export const OBJECT_STATUSES = ['Free', 'Reserved', 'Booked', 'Sold', 'Hidden'] as const;
export type ObjectStatus = (typeof OBJECT_STATUSES)[number];

export const STATUS_GLYPH: Record<ObjectStatus, string> = {
  Free: '○',
  Reserved: '◐',
  Booked: '●',
  Sold: '■',
  Hidden: '⊘',
};

export const BOOKING_STATUSES = ['Reserved', 'AwaitingPayment', 'Booked', 'Completed', 'ReserveExpired', 'BookingExpired', 'Cancelled'] as const;
export type BookingStatus = (typeof BOOKING_STATUSES)[number];
export const ACTIVE_BOOKING_STATUSES: readonly string[] = ['Reserved', 'AwaitingPayment', 'Booked'];
