import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { workerKillScenario } from './scenarios/worker-kill';

/**
 * Reduced profile (npm test): kill -9 of the worker ×3 (mid hold-expiration, retention and relay
 * batches) while bookings keep coming; after the last kill one worker finishes the jobs and the relay
 * (nothing lost on Kafka). Full profile: worker-kill.faults.test.ts (×20, every target including the
 * consumer mid-message, and every message applied once after the restarts).
 */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('kill -9 mid-batch ×3: never a partial batch, everything processed after restart, no event lost, duplicates absorbed', async () => {
  const seed = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  await workerKillScenario(t, { kills: 3, bookings: 1500, seed, label: 'worker kill (lite)', targets: ['hold-expiration', 'retention', 'relay'], waitForConsumers: false });
}, 240_000);
