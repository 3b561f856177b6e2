import { z } from 'zod';
import { positiveInt, durationMs } from '../platform/env';

/** catalog's settings: the delisted-retention job. */
export const catalogEnvShape = {
  // delisted-retention (spec: 0 30 3 * * * Europe/Moscow, 30 d, 2000, 100, 20 min)
  DELISTED_RETENTION_SCHEDULE: z.string().default('0 30 3 * * *'),
  DELISTED_RETENTION_TIMEZONE: z.string().default('Europe/Moscow'),
  DELISTED_RETENTION_PERIOD_MS: durationMs(30 * 24 * 3600_000),
  DELISTED_RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(2000),
  DELISTED_RETENTION_MAX_BATCHES_PER_RUN: positiveInt(100),
  DELISTED_RETENTION_MAX_RUN_DURATION_MS: durationMs(20 * 60_000),
};

export type CatalogEnv = z.infer<z.ZodObject<typeof catalogEnvShape>>;
