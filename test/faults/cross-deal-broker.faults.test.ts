import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { crossDealBrokerScenario } from './scenarios/cross-deal-broker';

/**
 * Full profile: 60 fast-check runs of two or three deals' events on one object through the real broker
 * (reordered across topics, duplicated, redelivered after consumer restarts; about half the runs sent as
 * one burst, so the consumer's partitions race for the object). FAULTS_SEED replays a
 * printed seed; FAULTS_RUNS changes the number of runs.
 */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); }, 120_000);
afterAll(async () => { await t?.close(); });

it('cross-deal events through Kafka in adversarial orders: chessboard ends equal to crm every time', async () => {
  const seed = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const stats = await crossDealBrokerScenario(t, { numRuns: Number(process.env.FAULTS_RUNS ?? 60), seed, label: 'cross-deal through Kafka', bursts: true, everyOrder: true });
  expect(stats.everyOrder).toBe(120);
  expect(stats.rejected).toBe(0);
});
