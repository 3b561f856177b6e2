import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { poisonScenario } from './scenarios/poison';

/** Poison messages (invalid JSON, unknown contract version, huge payload, contract violation, empty value) → DLQ; the consumer goes on. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('poison messages go to the DLQ, the consumer continues and its offset advances', async () => {
  await poisonScenario(t, { rounds: 5, label: 'poison (lite)' });
}, 180_000);
