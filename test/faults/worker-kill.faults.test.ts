import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { workerKillScenario } from './scenarios/worker-kill';

/**
 * Full profile: kill -9 of the worker 20 times, mid-batch — hold-expiration, delisted-retention, the
 * outbox relay and the chessboard consumer in turn — while bookings keep coming. FAULTS_SEED replays.
 */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('kill -9 mid-batch ×20: never a partial batch, everything processed after restart, no event lost, duplicates only from re-sent batches and absorbed', async () => {
  const seed = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  await workerKillScenario(t, { kills: 20, bookings: 8000, seed, label: 'worker kill' });
});
