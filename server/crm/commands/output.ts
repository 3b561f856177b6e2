import { z } from 'zod';
import type { BookingRecord } from '../booking';
import type { DealRecord } from '../deal';
import { BOOKING_STATUSES, DEAL_STATUSES, PAYMENT_STATUSES, REWARD_KINDS, type bookingPrograms } from '../schema';

/**
 * What crm's commands answer, as zod: each command's output schema (beside its input) is one of these.
 * Ids come from uuid columns: any uuid stored is read back (z.guid), whatever its version bits. Times stay
 * Date (superjson carries them to the console as Date).
 */

/** A booking row as the commands return it: every column of crm.bookings. */
export const bookingOutput = z.object({
  id: z.guid(),
  tenantId: z.guid(),
  dealId: z.guid(),
  propertyObjectId: z.guid(),
  programId: z.guid(),
  status: z.enum(BOOKING_STATUSES),
  reserveExpiresAt: z.date(),
  bookingExpiresAt: z.date().nullable(),
  bookedAt: z.date().nullable(),
  paymentStatus: z.enum(PAYMENT_STATUSES),
  contractDocument: z.string().nullable(),
  receiptDocument: z.string().nullable(),
  requisiteSetId: z.guid().nullable(),
  requisiteSetVersion: z.number().int().nullable(),
  createdBy: z.guid().nullable(),
  closedReason: z.string().nullable(),
  closedAt: z.date().nullable(),
  extensionCount: z.number().int(),
  version: z.number().int(),
  createdAt: z.date(),
  updatedAt: z.date(),
}) satisfies z.ZodType<BookingRecord>;

/** A deal row: every column of crm.deals. */
export const dealOutput = z.object({
  id: z.guid(),
  tenantId: z.guid(),
  title: z.string(),
  agentId: z.guid().nullable(),
  investorId: z.guid().nullable(),
  status: z.enum(DEAL_STATUSES),
  version: z.number().int(),
  createdAt: z.date(),
  updatedAt: z.date(),
}) satisfies z.ZodType<DealRecord>;

/** A booking programme row: every column of crm.booking_programs. */
export const bookingProgramOutput = z.object({
  id: z.guid(),
  tenantId: z.guid(),
  name: z.string(),
  isPaid: z.boolean(),
  reserveDurationMinutes: z.number().int(),
  bookingDurationHours: z.number().int(),
  rewardKind: z.enum(REWARD_KINDS).nullable(),
  rewardValue: z.number().nullable(),
  maxExtensions: z.number().int(),
  createdAt: z.date(),
}) satisfies z.ZodType<typeof bookingPrograms.$inferSelect>;
