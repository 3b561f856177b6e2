import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, inject } from 'vitest';
import { createTopics, dropDatabase, withDatabase } from '../../scripts/infra';
// the job and consumer lists the ops modules read, as every process entry registers them
import '../../server/main/registry';
import { createDatabase, type Database } from '../../server/platform/db';
import { parseEnv, resetEnvCache, type Env } from '../../server/main/env';
import { createCapturingLogger, type Logger } from '../../server/platform/logger';

export interface TestContext {
  database: Database;
  url: string;
  env: Env;
  /** KAFKA_TOPIC_PREFIX of this test file: topics and consumer groups are isolated per file */
  prefix: string;
  logger: Logger;
  logLines: () => Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * An isolated, migrated database cloned from the template (real PostgreSQL), and with `kafka: true`
 * a unique topic prefix whose topics exist on the real broker.
 */
export async function createTestContext(opts: { kafka?: boolean; env?: Record<string, string> } = {}): Promise<TestContext> {
  const adminUrl = inject('adminDatabaseUrl');
  const template = inject('templateDatabase');
  const brokers = inject('kafkaBrokers');
  const name = `pin_t_${randomBytes(5).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    // concurrent clones of one template are serialised: CREATE DATABASE needs the template idle
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.unsafe(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        break;
      } catch (e) {
        if (attempt > 50 || !/being accessed by other users/.test((e as Error).message)) throw e;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end({ timeout: 1 });
  }
  const url = withDatabase(adminUrl, name);
  const prefix = `t${randomBytes(4).toString('hex')}.`;
  if (opts.kafka) await createTopics(brokers, prefix);
  const env = parseEnv({ ...process.env, NODE_ENV: 'test', DATABASE_URL: url, KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: prefix, LOG_LEVEL: 'debug', ...opts.env });
  const database = createDatabase(url, { max: 20, applicationName: 'pin-test' });
  const { logger, lines } = createCapturingLogger('test');
  return {
    database,
    url,
    env,
    prefix,
    logger,
    logLines: lines,
    close: async () => {
      await database.close();
      await dropDatabase(adminUrl, name).catch(() => {});
    },
  };
}

/**
 * Closes the route handlers' services (app/api/*) and forgets the env they read, so the next request
 * builds them again from process.env as it is now (a test that changes an env setting calls this).
 */
export async function resetRouteServices(): Promise<void> {
  const g = globalThis as unknown as { __pinServices?: { database: { close(): Promise<void> } } };
  await g.__pinServices?.database.close();
  delete g.__pinServices;
  resetEnvCache();
}

/**
 * Points the app's route handlers (app/api/*, which build their services from process.env on first
 * use) at this test's database and topics. Returns the undo: closes those services and restores the
 * environment, so the next file's handlers start clean.
 */
export function routeHandlersOn(t: TestContext): () => Promise<void> {
  const g = globalThis as unknown as { __pinServices?: { database: { close(): Promise<void> } } };
  const saved = { ...process.env };
  delete g.__pinServices;
  Object.assign(process.env, { DATABASE_URL: t.url, KAFKA_BROKERS: t.env.KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: t.prefix, LOG_LEVEL: 'silent' });
  resetEnvCache();
  return async () => {
    await resetRouteServices();
    process.env = saved;
    resetEnvCache();
  };
}

/**
 * The set-up of a test file (or describe block) that calls the web's route handlers in process: a test
 * context, the handlers pointed at it before the tests, both undone after. The returned object is filled
 * in `beforeAll`, so use it inside tests and hooks only.
 */
export function testContextForRouteHandlers(opts: Parameters<typeof createTestContext>[0] = {}): TestContext {
  const t = {} as TestContext;
  let restore: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    Object.assign(t, await createTestContext(opts));
    restore = routeHandlersOn(t);
  });
  afterAll(async () => {
    await restore?.();
    await t.close?.();
  });
  return t;
}
