import { z } from 'zod';
import { TOPICS } from './topics';
import { envelopeSchema, nullableTimestamp, timestamp } from './envelope';

/** Every booking event carries bookingVersion: the booking's version after the transition (DESIGN 3). */
const bookingBase = {
  bookingId: z.uuid(),
  dealId: z.uuid(),
  propertyObjectId: z.uuid(),
  tenantId: z.uuid(),
  bookingVersion: z.number().int().positive(),
  /** who created the booking (a deal participant: notifications' recipient); additive, absent in older events */
  createdBy: z.uuid().nullable().optional(),
  /**
   * crm's creation time of the booking (DESIGN decision 9): orders two bookings of one object, so an event
   * of a newer booking can take the hold over whatever topic it came on. Optional: events written before
   * it existed still parse (chessboard then falls back to what it recorded of the booking).
   */
  bookingCreatedAt: timestamp.optional(),
};

export const bookingCreatedPayload = z.object({
  ...bookingBase,
  programId: z.uuid(),
  /** the buyer's requisite set in profile (an id, never the data); absent in events written before it existed */
  requisiteSetId: z.uuid().nullable().optional(),
  status: z.literal('Reserved'),
  reserveExpiresAt: timestamp,
  createdAt: timestamp,
  /** the deal's agent (a participant of the deal chat, messenger); absent in events written before it was added */
  agentId: z.uuid().nullable().optional(),
  /** the deal's investor (a participant: deal chat, notifications); additive, absent in older events */
  investorId: z.uuid().nullable().optional(),
});
export const bookingConfirmedPayload = z.object({
  ...bookingBase,
  status: z.literal('Booked'),
  bookedAt: timestamp,
  bookingExpiresAt: timestamp,
});
/**
 * The reward crm computed from the booking programme's rule when the payment was confirmed: `percent`
 * of `price` or a `fixed` sum (`value`), `amount` in roubles. Carried so that rewards reads no crm table.
 */
export const bookingReward = z.object({
  kind: z.enum(['percent', 'fixed']),
  value: z.number().min(0),
  /** the flat's price the percentage was taken of (null: crm did not know it; the amount is then 0) */
  price: z.number().min(0).nullable(),
  amount: z.number().min(0),
});
export const bookingPaidPayload = z.object({
  ...bookingBase,
  paidAt: timestamp,
  /** the deal's agent: whose reward the payment earns; additive, absent in older events */
  agentId: z.uuid().nullable().optional(),
  /** the programme's reward (null: the programme pays none); additive, absent in older events */
  reward: bookingReward.nullable().optional(),
});
export const bookingExtendedPayload = z.object({
  ...bookingBase,
  previousBookingExpiresAt: timestamp,
  bookingExpiresAt: timestamp,
});
export const bookingExpiredPayload = z.object({
  ...bookingBase,
  phase: z.enum(['Reserve', 'Booking']),
  status: z.enum(['ReserveExpired', 'BookingExpired']),
  expiredAt: timestamp,
  deadline: timestamp,
});
export const bookingCancelledPayload = z.object({
  ...bookingBase,
  fromStatus: z.enum(['Reserved', 'AwaitingPayment', 'Booked']),
  reason: z.string().max(500),
  cancelledAt: timestamp,
});
/** Deal events: key = DealId. They name the booking whose object they affect (null if none). */
export const dealCancelledPayload = z.object({
  dealId: z.uuid(),
  tenantId: z.uuid(),
  bookingId: z.uuid().nullable(),
  propertyObjectId: z.uuid().nullable(),
  bookingVersion: z.number().int().positive().nullable(),
  /** creator of the released booking (null: none); additive, absent in older events */
  createdBy: z.uuid().nullable().optional(),
  /** creation time of the released booking (DESIGN decision 9; null: none); additive, absent in older events */
  bookingCreatedAt: nullableTimestamp.optional(),
  reason: z.string().max(500),
  cancelledAt: timestamp,
});
export const dealSaleStartedPayload = z.object({
  dealId: z.uuid(),
  tenantId: z.uuid(),
  bookingId: z.uuid(),
  propertyObjectId: z.uuid(),
  bookingVersion: z.number().int().positive(),
  /** creator of the booking; additive, absent in older events */
  createdBy: z.uuid().nullable().optional(),
  /** creation time of the booking (DESIGN decision 9); additive, absent in older events */
  bookingCreatedAt: timestamp.optional(),
  startedAt: timestamp,
});

export const crmContracts = {
  [TOPICS.bookingCreated]: envelopeSchema('BookingCreated', bookingCreatedPayload),
  [TOPICS.bookingConfirmed]: envelopeSchema('BookingConfirmed', bookingConfirmedPayload),
  [TOPICS.bookingPaid]: envelopeSchema('BookingPaid', bookingPaidPayload),
  [TOPICS.bookingExtended]: envelopeSchema('BookingExtended', bookingExtendedPayload),
  [TOPICS.bookingExpired]: envelopeSchema('BookingExpired', bookingExpiredPayload),
  [TOPICS.bookingCancelled]: envelopeSchema('BookingCancelled', bookingCancelledPayload),
  [TOPICS.dealCancelled]: envelopeSchema('DealCancelled', dealCancelledPayload),
  [TOPICS.dealSaleStarted]: envelopeSchema('DealSaleStarted', dealSaleStartedPayload),
} as const;

export const CRM_EVENT_TYPES = {
  [TOPICS.bookingCreated]: 'BookingCreated',
  [TOPICS.bookingConfirmed]: 'BookingConfirmed',
  [TOPICS.bookingPaid]: 'BookingPaid',
  [TOPICS.bookingExtended]: 'BookingExtended',
  [TOPICS.bookingExpired]: 'BookingExpired',
  [TOPICS.bookingCancelled]: 'BookingCancelled',
  [TOPICS.dealCancelled]: 'DealCancelled',
  [TOPICS.dealSaleStarted]: 'DealSaleStarted',
} as const;

export type CrmTopic = keyof typeof crmContracts;
export type CrmPayload<T extends CrmTopic> = z.infer<(typeof crmContracts)[T]>['payload'];
export { nullableTimestamp };
