import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { trpcFuzzScenario } from './scenarios/trpc-fuzz';

/** Full profile: every tRPC procedure × 1,000 generated requests. FAULTS_SEED replays. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('every tRPC procedure answers 1,000 generated inputs with 2xx or a typed 4xx, never 5xx, and a rejected call writes nothing', async () => {
  const seed = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  await trpcFuzzScenario(t, { runsPerProcedure: 1000, seed, label: 'tRPC fuzz' });
});
