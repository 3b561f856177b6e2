import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { webHardeningScenario } from './scenarios/web-hardening';

/** Session and web hardening of the API (cookie flags, CSRF, login rate limit, no internals in a 500, 400 for unstorable values). */
let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

it('session cookie flags, CSRF refusal, login rate limit, a 500 without internals, 400 for values PostgreSQL refuses', async () => {
  await webHardeningScenario(t, { label: 'web hardening (lite)' });
}, 120_000);
