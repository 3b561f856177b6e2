import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { replayScenario } from './scenarios/replay';

/** Full profile: replay of every consumed topic from offset 0 (demo seed + a saga over 60 objects). */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('replaying every topic from offset 0 changes no state and writes no outbox row (with and without the inbox)', async () => {
  await replayScenario(t, { objects: 60, label: 'replay' });
});
