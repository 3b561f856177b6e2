import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { replayScenario } from './scenarios/replay';

/** Replay of every consumed topic from offset 0 (a saga over 24 objects; the full profile adds the demo seed): state unchanged, no new outbox row. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

it('replaying every topic from offset 0 changes no state and writes no outbox row (with and without the inbox)', async () => {
  await replayScenario(t, { objects: 24, label: 'replay (lite)', demoSeed: false });
}, 240_000);
