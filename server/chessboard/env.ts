import { z } from 'zod';
import { positiveInt, durationMs } from '../platform/env';

/** chessboard's settings: its jobs' schedules and limits, and the live feed's cap per session. */
export const chessboardEnvShape = {
  // property-object-hold-expiration (spec: every 60 s UTC, HoldGrace 10 min, BatchSize 200)
  HOLD_EXPIRATION_SCHEDULE: z.string().default('30 * * * * *'),
  HOLD_EXPIRATION_GRACE_MS: durationMs(10 * 60_000),
  HOLD_EXPIRATION_BATCH_SIZE: positiveInt(200),

  // project-aggregates-recalc (debounce 30 s)
  AGGREGATES_RECALC_SCHEDULE: z.string().default('*/10 * * * * *'),
  AGGREGATES_RECALC_DEBOUNCE_MS: durationMs(30_000),

  // live streams (app/api/events) one session may hold open in a web process; one more is a 429
  LIVE_STREAMS_PER_SESSION: z.coerce.number().int().min(1).max(10_000).default(8),
};

export type ChessboardEnv = z.infer<z.ZodObject<typeof chessboardEnvShape>>;
