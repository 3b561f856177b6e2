import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../testing/harness';
import { trpcFuzzScenario } from './scenarios/trpc-fuzz';

/** Reduced profile (npm test): every tRPC procedure × 300 generated requests (full profile: 1,000). FAULTS_SEED replays. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('every tRPC procedure answers generated inputs with 2xx or a typed 4xx, never 5xx, and a rejected call writes nothing', async () => {
  const seed = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  await trpcFuzzScenario(t, { runsPerProcedure: Number(process.env.FAULTS_FUZZ_RUNS ?? 300), seed, label: 'tRPC fuzz (lite)' });
}, 300_000);
