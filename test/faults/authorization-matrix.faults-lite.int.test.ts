import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { authorizationMatrixScenario } from './scenarios/authorization-matrix';

/** Every procedure × role / signed-out × own / foreign tenant: 0 leaks; foreign ids answer NOT_FOUND. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('authorization matrix over every procedure: 0 leaks, foreign ids NOT_FOUND', async () => {
  const { leaks, mismatches } = await authorizationMatrixScenario(t, { label: 'authorization matrix' });
  expect(leaks).toEqual([]);
  expect(mismatches).toEqual([]);
}, 180_000);
