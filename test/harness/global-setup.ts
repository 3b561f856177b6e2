import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { createTopics, dropDatabase, ensureDatabase, ensureInfra, type Infra } from '../../scripts/infra';
import { runMigrations } from '../../server/platform/migrate';

/**
 * Starts (or reuses, via TEST_ADMIN_DATABASE_URL / KAFKA_BROKERS) the real PostgreSQL and Kafka, and
 * migrates a template database that every integration test file clones (see harness.ts).
 * `npm test` starts the infra itself and passes it in; `npx vitest` alone starts it here.
 */
let infra: Infra | undefined;
let templateDb: string | undefined;
let adminUrl: string;

export async function setup(project: TestProject): Promise<void> {
  adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? '';
  if (!adminUrl || !process.env.KAFKA_BROKERS) {
    infra = await ensureInfra({ profile: 'test', fresh: true, log: (l) => console.log(`[test-infra] ${l}`) });
    adminUrl = adminUrl || infra.databaseUrl;
    process.env.KAFKA_BROKERS = infra.kafkaBrokers;
  }
  templateDb = `pin_tpl_${randomBytes(4).toString('hex')}`;
  const url = await ensureDatabase(adminUrl, templateDb);
  await runMigrations(url);
  // warm the broker's metadata so the first test file does not pay for it
  await createTopics(process.env.KAFKA_BROKERS!, `warmup-${randomBytes(3).toString('hex')}.`);
  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', templateDb);
  project.provide('kafkaBrokers', process.env.KAFKA_BROKERS!);
}

export async function teardown(): Promise<void> {
  if (templateDb) await dropDatabase(adminUrl, templateDb).catch(() => {});
  await infra?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    kafkaBrokers: string;
  }
}
