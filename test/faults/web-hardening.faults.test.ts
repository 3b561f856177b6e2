import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { npmAuditScenario } from './scenarios/npm-audit';
import { webHardeningScenario } from './scenarios/web-hardening';

/**
 * Full profile: session and web hardening of the API, and `npm audit --omit=dev`. The security headers
 * of next.config.mjs are checked against `next start` by e2e/hardening.spec.ts (npm test).
 */
let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

it('session cookie flags, CSRF refusal, login rate limit, a 500 without internals, 400 for values PostgreSQL refuses', async () => {
  await webHardeningScenario(t, { label: 'web hardening' });
});

it('npm audit --omit=dev: no high or critical vulnerability', async (ctx) => {
  await npmAuditScenario(ctx, { label: 'npm audit --omit=dev' });
});
