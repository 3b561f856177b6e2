import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { poisonScenario } from './scenarios/poison';

/** Full profile: 100 poison messages (5 kinds) interleaved with valid ones on one partition. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('100 poison messages go to the DLQ, the consumer continues and its offset advances', async () => {
  await poisonScenario(t, { rounds: 100, label: 'poison' });
});
