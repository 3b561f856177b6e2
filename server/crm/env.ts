import { z } from 'zod';
import { positiveInt } from '../platform/env';

/** crm's settings: its jobs (booking expiration, the reports' daily rollup). */
export const crmEnvShape = {
  // booking-expiration (crm-booking-saga: cycle 60 s)
  BOOKING_EXPIRATION_SCHEDULE: z.string().default('0 * * * * *'),
  BOOKING_EXPIRATION_BATCH_SIZE: positiveInt(200),

  // reports-daily-rollup: hourly (a day not rolled up yet is read from the bookings, so a late cycle costs speed, not figures)
  REPORTS_DAILY_ROLLUP_SCHEDULE: z.string().default('0 7 * * * *'),
};

export type CrmEnv = z.infer<z.ZodObject<typeof crmEnvShape>>;
