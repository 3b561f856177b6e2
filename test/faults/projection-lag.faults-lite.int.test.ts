import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../harness/harness';
import { projectionLagScenario } from './scenarios/projection-lag';

/** Reduced profile (npm test): one object per kind of change while crm's projection is stopped. Full: projection-lag.faults.test.ts. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); }, 120_000);
afterAll(async () => { await t?.close(); });

it('crm.property_objects behind chessboard: what CreateBooking books from the stale view is refused by chessboard, listed by reconciliation and repaired; after catch-up crm answers what chessboard says', async () => {
  await projectionLagScenario(t, { perKind: 1, label: 'projection lag (lite)' });
}, 180_000);
