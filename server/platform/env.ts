import { z } from 'zod';

/**
 * The one configuration module of web, worker and scripts. Every setting has the spec's default;
 * a bad value stops the process with one line naming the variable (see `loadEnv`).
 */
const positiveInt = (def: number) => z.coerce.number().int().positive().default(def);
const durationMs = (def: number) => z.coerce.number().int().positive().default(def);

export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  // a multi-host URL (a primary and its standbys) names target_session_attrs=primary: postgres.js 3.4 judges
  // `read-write` by default_transaction_read_only, which is off on a hot standby, and would keep a session there
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
    .refine((v) => !/[?&]target_session_attrs=read-write(&|$)/.test(v), 'target_session_attrs=primary, not read-write (postgres.js would stay on a standby)'),
  /**
   * Optional: a read replica for the ops dashboard's reads (the overview, stuck holds, hold releases),
   * which then also shows how far the replica is behind. Empty: the dashboard reads the primary.
   */
  DATABASE_READ_URL: z.union([z.literal(''), z.string().regex(/^postgres(ql)?:\/\//, 'empty or a postgres:// URL')]).default(''),
  KAFKA_BROKERS: z
    .string()
    .regex(/^[^,\s:]+:\d+(,[^,\s:]+:\d+)*$/, 'comma-separated host:port list'),
  KAFKA_TOPIC_PREFIX: z.string().regex(/^[A-Za-z0-9._-]*$/, 'letters, digits, . _ -').default(''),
  KAFKA_CLIENT_ID: z.string().default('pin-booking'),
  // topics (`npm run kafka:topics`, server/platform/kafka/topics.ts): a local single broker takes 3 / 1 / 1;
  // a production cluster 3 brokers or more, KAFKA_REPLICATION_FACTOR=3, KAFKA_MIN_INSYNC_REPLICAS=2
  KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(1000).default(3),
  KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(10).default(1),
  KAFKA_MIN_INSYNC_REPLICAS: z.coerce.number().int().min(1).max(10).default(1),
  /** web and worker: how long a process may take on SIGTERM/SIGINT to finish what it holds before it exits anyway */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** the web's /metrics on a port of its own (127.0.0.1, served by server/main/web-server.ts); 0 = none */
  WEB_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9465),
  /** if set, /api/metrics on the public port also answers to `Authorization: Bearer <token>`; unset: 404 there */
  WEB_METRICS_TOKEN: z.string().refine((v) => v === '' || v.length >= 32, 'empty or at least 32 characters').default(''),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * json: one JSON object per line, for log shippers (production, tests, piped output). pretty: one
   * readable line per event for a person at a terminal; `npm start` sets it for web and worker when its
   * own stdout is a TTY and LOG_FORMAT is unset (scripts/start-stack.ts).
   */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  SESSION_SECRET: z.string().min(32, 'at least 32 characters').default('dev-only-session-secret-change-me-in-production!!'),
  SESSION_TTL_HOURS: positiveInt(12),
  /**
   * Reverse proxies in front of the web that append to X-Forwarded-For (nginx $proxy_add_x_forwarded_for).
   * 0 (default, nothing in front): the sign-in limits count the socket's address and X-Forwarded-For is
   * not read at all; n: the entry n places from the right (server/auth/client-ip.ts).
   */
  TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  /**
   * 1: the web runs behind a reverse proxy that overwrites X-Forwarded-Host and X-Forwarded-Proto, and the
   * CSRF check (server/auth/same-origin.ts) believes them. 0 (default): they are not read — any client
   * can write them. docs/security.md
   */
  TRUST_PROXY: z.enum(['0', '1'], '0 or 1').default('0'),
  /**
   * The origins the console is served at, comma-separated (`https://console.pin.example`): a mutation's
   * Origin must be one of them, and the request's Host and forwarded headers are then not read at all.
   * Empty (default): the request's own Host is the origin. docs/security.md
   */
  PUBLIC_ORIGIN: z.string().default('').transform((value, ctx) => {
    const origins: string[] = [];
    for (const raw of value.split(',').map((s) => s.trim()).filter(Boolean)) {
      const url = URL.canParse(raw) ? new URL(raw) : null;
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash || url.pathname !== '/') {
        ctx.addIssue({ code: 'custom', message: `"${raw}" is not an origin: comma-separated scheme://host[:port], no path` });
        return z.NEVER;
      }
      origins.push(url.origin);
    }
    return origins;
  }),

  // limits of the web API in front of tRPC (app/api/trpc): a larger body is a 413 before it is parsed,
  // a larger batch a 400 before any of its calls runs
  API_MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  API_MAX_BATCH_CALLS: z.coerce.number().int().min(1).max(100).default(10),
  // live streams (app/api/events) one session may hold open in a web process; one more is a 429
  LIVE_STREAMS_PER_SESSION: z.coerce.number().int().min(1).max(10_000).default(8),
  /**
   * Per-user token bucket on reads (tRPC queries, server/trpc/read-limit.ts): a query costs 1 token, a heavy
   * one (the ops dashboard's) 10; the bucket holds READ_LIMIT_BURST and refills READ_LIMIT_PER_SECOND
   * tokens a second. An empty bucket answers 429 with Retry-After. READ_LIMIT_PER_SECOND=0 turns it off.
   */
  READ_LIMIT_PER_SECOND: z.coerce.number().min(0).max(100_000).default(50),
  READ_LIMIT_BURST: z.coerce.number().int().min(1).max(1_000_000).default(200),

  // booking-expiration (crm-booking-saga: cycle 60 s)
  BOOKING_EXPIRATION_SCHEDULE: z.string().default('0 * * * * *'),
  BOOKING_EXPIRATION_BATCH_SIZE: positiveInt(200),

  // property-object-hold-expiration (spec: every 60 s UTC, HoldGrace 10 min, BatchSize 200)
  HOLD_EXPIRATION_SCHEDULE: z.string().default('30 * * * * *'),
  HOLD_EXPIRATION_GRACE_MS: durationMs(10 * 60_000),
  HOLD_EXPIRATION_BATCH_SIZE: positiveInt(200),

  // project-aggregates-recalc (debounce 30 s)
  AGGREGATES_RECALC_SCHEDULE: z.string().default('*/10 * * * * *'),
  AGGREGATES_RECALC_DEBOUNCE_MS: durationMs(30_000),

  // delisted-retention (spec: 0 30 3 * * * Europe/Moscow, 30 d, 2000, 100, 20 min)
  DELISTED_RETENTION_SCHEDULE: z.string().default('0 30 3 * * *'),
  DELISTED_RETENTION_TIMEZONE: z.string().default('Europe/Moscow'),
  DELISTED_RETENTION_PERIOD_MS: durationMs(30 * 24 * 3600_000),
  DELISTED_RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(2000),
  DELISTED_RETENTION_MAX_BATCHES_PER_RUN: positiveInt(100),
  DELISTED_RETENTION_MAX_RUN_DURATION_MS: durationMs(20 * 60_000),

  // notifications: "deadline soon" when a reserve/booking has less than this left; read ones pruned after the retention
  NOTIFICATIONS_DEADLINE_SOON_SCHEDULE: z.string().default('15 * * * * *'),
  NOTIFICATIONS_DEADLINE_SOON_MINUTES: z.coerce.number().int().min(1).max(7 * 24 * 60).default(15),
  NOTIFICATIONS_RETENTION_SCHEDULE: z.string().default('0 45 3 * * *'),
  NOTIFICATIONS_RETENTION_MS: durationMs(30 * 24 * 3600_000),

  // reports-daily-rollup: hourly (a day not rolled up yet is read from the bookings, so a late cycle costs speed, not figures)
  REPORTS_DAILY_ROLLUP_SCHEDULE: z.string().default('0 7 * * * *'),

  // outbox relay
  OUTBOX_RELAY_SCHEDULE: z.string().default('*/5 * * * * *'),
  OUTBOX_RELAY_BATCH_SIZE: positiveInt(500),
  OUTBOX_RETENTION_MS: durationMs(7 * 24 * 3600_000),

  // ops.job_runs history: at least two days, so that a daily job's last run is still there when the
  // "has not run for > 26 h" alert asks (and a fresh installation is told from one whose history was pruned)
  JOB_RUNS_RETENTION_MS: durationMs(30 * 24 * 3600_000).refine((ms) => ms >= 2 * 24 * 3600_000, 'at least 2 days (172800000)'),

  // OpenTelemetry traces (server/platform/tracing.ts): off by default; `otlp` sends OTLP/HTTP to
  // <endpoint>/v1/traces, `console` prints finished spans (debugging)
  OTEL_TRACES_EXPORTER: z.enum(['none', 'otlp', 'console']).default('none'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).default('http://localhost:4318'),

  // profile: the key of the buyers' requisite sets at rest (AES-256-GCM, server/profile/crypto.ts).
  // PROFILE_DATA_KEY: base64 of 32 bytes, the key new versions are written with, under PROFILE_DATA_KEY_ID;
  // PROFILE_DATA_OLD_KEYS: "id:base64,id:base64" — retired keys older versions may still be read with.
  // Unset outside production: a fixed dev/test key (so `npm start` and tests need no setup); production requires it.
  PROFILE_DATA_KEY: z.string().regex(/^([A-Za-z0-9+/]{43}=)?$/, 'base64 of 32 bytes').default(''),
  PROFILE_DATA_KEY_ID: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, '1-32 letters, digits, _ -').default('k1'),
  PROFILE_DATA_OLD_KEYS: z
    .string()
    .regex(/^([A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/]{43}=)?(,[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/]{43}=)*$/, 'comma-separated id:base64-of-32-bytes list')
    .default(''),
});

export type Env = z.infer<typeof envSchema>;

export class EnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvError';
  }
}

/** Parses the environment; throws EnvError whose message is one line per bad variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const env = parseEnvWith(envSchema, source);
  if (env.NODE_ENV === 'production' && !env.PROFILE_DATA_KEY) {
    // the dev key is public (it is in the repository): personal data is never stored with it in production
    throw new EnvError('invalid configuration: PROFILE_DATA_KEY is required in production (base64 of 32 bytes)');
  }
  return env;
}

/** `parseEnv` with another schema (e.g. a pick of `envSchema` for a command that needs only Kafka). */
export function parseEnvWith<S extends z.ZodType>(schema: S, source: Record<string, string | undefined> = process.env): z.infer<S> {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || '(environment)';
    const got = source[name];
    const expected = issue.code === 'invalid_type' && got === undefined ? 'is required' : issue.message;
    return `invalid configuration: ${name} ${expected}${got !== undefined ? ` (got "${got}")` : ''}`;
  });
  throw new EnvError(lines.join('\n'));
}

let cached: Env | undefined;

/** For processes: a bad environment prints the variable and exits 1. */
export function loadEnv(): Env {
  if (cached) return cached;
  try {
    cached = parseEnv();
    return cached;
  } catch (e) {
    if (e instanceof EnvError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
}

export function resetEnvCache(): void {
  cached = undefined;
}
