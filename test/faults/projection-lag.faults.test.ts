import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { projectionLagScenario } from './scenarios/projection-lag';

/** Full profile: 10 objects per kind of change (hidden, deleted, sold, shown again, created) while crm's projection is stopped. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); }, 120_000);
afterAll(async () => { await t?.close(); });

it('crm.property_objects behind chessboard: stale bookings refused, reconciled and repaired; after catch-up crm answers what chessboard says', async () => {
  await projectionLagScenario(t, { perKind: 10, label: 'projection lag' });
});
