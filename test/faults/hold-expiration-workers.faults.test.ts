import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { holdExpirationWorkersScenario } from './scenarios/hold-expiration-workers';

/** Full profile: 4 worker processes × 5,000 stuck holds → 5,000 released, 5,000 events, 0 duplicates. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('4 worker processes release 5,000 stuck holds exactly once (SKIP LOCKED, no duplicate event)', async () => {
  await holdExpirationWorkersScenario(t, { workers: 4, holds: 5000, timeoutMs: 10 * 60_000 });
});
