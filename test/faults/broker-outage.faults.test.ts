import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { brokerOutageScenario } from './scenarios/broker-outage';

/** Full profile: the Kafka broker (this file's own) down 60 s while 1,000 bookings are created. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

it('Kafka down 60 s while 1,000 bookings are created: 0 failed commands, the backlog drains, 0 lost, per-booking order kept', async () => {
  await brokerOutageScenario(t, { downMs: 60_000, bookings: 1000, label: 'broker outage' });
});
