import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { startOwnKafkaCluster } from './helpers/infra';
import { clusterScenario } from './scenarios/cluster';

/**
 * The multi-broker profile (`npm run test:faults -- --brokers 3`): one 3-node KRaft cluster for the
 * file, a database and topic prefix per scenario, 2 web + 2 worker processes under a booking load.
 */
let cluster: Awaited<ReturnType<typeof startOwnKafkaCluster>>;
let t: TestContext;
beforeAll(async () => {
  cluster = await startOwnKafkaCluster('cluster');
});
afterAll(async () => { await cluster?.close(); });

const scenario = (fault: Parameters<typeof clusterScenario>[2]['fault'], label: string) => async () => {
  t = await createTestContext();
  try {
    await clusterScenario(t, cluster, { fault, bookings: 2000, label });
  } finally {
    await t.close();
  }
};

it('one broker killed (-9) and restarted mid-run: 0 commands failed, 0 events lost, 0 duplicate effects, per-key order kept',
  scenario('broker-kill', 'broker kill'));
it('the worker holding the relay lock killed (-9): the other worker publishes within 10 s, nothing lost or applied twice',
  scenario('relay-lock-kill', 'relay lock holder kill'));
it('a worker added and one removed: the consumer groups rebalance, every message applied once in effect, lag back to 0',
  scenario('worker-add-remove', 'worker add/remove'));
