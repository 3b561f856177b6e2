import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { interleavingsScenario } from './scenarios/interleavings';

/**
 * Reduced profile (npm test) of the randomized saga interleavings: 120 fast-check runs (full profile:
 * interleavings.faults.test.ts, 1,000 runs). FAULTS_SEED replays a printed seed.
 */
let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

it('INV-BKG-001, INV-CHS-002, INV-CHS-003 hold and chessboard converges with crm under random interleavings, duplicates and reorderings', async () => {
  const seed = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  await interleavingsScenario(t, { numRuns: 120, seed, maxActions: 40, label: 'interleavings (lite)' });
}, 240_000);
