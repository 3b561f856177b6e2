import { z } from 'zod';

/**
 * The machinery of the configuration of web, worker and scripts, and platform's own settings. Every
 * setting has the spec's default; a bad value stops the process with one line naming the variable. Each
 * context declares its settings beside its code (server/<context>/env.ts) and the composition root
 * (server/main/env.ts) merges them with these into the schema a process parses.
 */
export const positiveInt = (def: number) => z.coerce.number().int().positive().default(def);
export const durationMs = (def: number) => z.coerce.number().int().positive().default(def);

export const platformEnvShape = {
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
  // limits of the web API in front of tRPC (app/api/trpc): a larger body is a 413 before it is parsed,
  // a larger batch a 400 before any of its calls runs
  API_MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  API_MAX_BATCH_CALLS: z.coerce.number().int().min(1).max(100).default(10),
  /**
   * Per-user token bucket on reads (tRPC queries, server/trpc/read-limit.ts): a query costs 1 token, a heavy
   * one (the ops dashboard's) 10; the bucket holds READ_LIMIT_BURST and refills READ_LIMIT_PER_SECOND
   * tokens a second. An empty bucket answers 429 with Retry-After. READ_LIMIT_PER_SECOND=0 turns it off.
   */
  READ_LIMIT_PER_SECOND: z.coerce.number().min(0).max(100_000).default(50),
  READ_LIMIT_BURST: z.coerce.number().int().min(1).max(1_000_000).default(200),

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

};

export const platformEnvSchema = z.object(platformEnvShape);
export type PlatformEnv = z.infer<typeof platformEnvSchema>;

export class EnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvError';
  }
}

/** Parses `source` with `schema` (the composed one, or a pick for a command that needs only Kafka); throws EnvError whose message is one line per bad variable. */
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
