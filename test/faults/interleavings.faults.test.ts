import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { interleavingsScenario } from './scenarios/interleavings';

/**
 * Full profile: 1,000 fast-check runs of randomized saga interleavings (commands, jobs, the safety net,
 * time, and the consumer applying outbox events out of order, duplicated and past the inbox).
 * FAULTS_SEED replays a printed seed; FAULTS_RUNS changes the number of runs.
 */
let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

it('INV-BKG-001, INV-CHS-002, INV-CHS-003 hold and chessboard converges with crm under 1,000 random interleavings', async () => {
  const seed = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  await interleavingsScenario(t, { numRuns: Number(process.env.FAULTS_RUNS ?? 1000), seed, maxActions: 40, label: 'interleavings' });
});
