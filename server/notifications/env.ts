import { z } from 'zod';
import { durationMs } from '../platform/env';

/** notifications' settings: the deadline-soon and retention jobs. */
export const notificationsEnvShape = {
  // notifications: "deadline soon" when a reserve/booking has less than this left; read ones pruned after the retention
  NOTIFICATIONS_DEADLINE_SOON_SCHEDULE: z.string().default('15 * * * * *'),
  NOTIFICATIONS_DEADLINE_SOON_MINUTES: z.coerce.number().int().min(1).max(7 * 24 * 60).default(15),
  NOTIFICATIONS_RETENTION_SCHEDULE: z.string().default('0 45 3 * * *'),
  NOTIFICATIONS_RETENTION_MS: durationMs(30 * 24 * 3600_000),
};

export type NotificationsEnv = z.infer<z.ZodObject<typeof notificationsEnvShape>>;
