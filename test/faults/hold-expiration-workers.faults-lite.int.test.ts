import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { holdExpirationWorkersScenario } from './scenarios/hold-expiration-workers';

/** Reduced profile (npm test): 2 worker processes × 500 stuck holds. Full: hold-expiration-workers.faults.test.ts. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('2 worker processes release 500 stuck holds exactly once (SKIP LOCKED, no duplicate event)', async () => {
  await holdExpirationWorkersScenario(t, { workers: 2, holds: 500, timeoutMs: 90_000 });
}, 150_000);
