import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../server/testing/harness';
import { seed } from './seed';

let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

describe('demo seed: notifications (#20)', () => {
  it('every seeded booking event went through notifications\' consumer: one notification per participant, the holds\' deadlines projected', async () => {
    await seed(t.url, () => {});
    const s = t.database.sql;
    const [c] = await s`SELECT (SELECT count(*)::int FROM notifications.inbox WHERE result = 'applied') AS events,
      (SELECT count(*)::int FROM notifications.notifications) AS rows,
      (SELECT count(*)::int FROM crm.bookings) AS bookings,
      (SELECT count(*)::int FROM notifications.hold_deadlines WHERE NOT ended) AS active_holds,
      (SELECT count(*)::int FROM crm.bookings WHERE status IN ('Reserved', 'AwaitingPayment', 'Booked')) AS active_bookings`;
    expect(c!.events).toBeGreaterThan(c!.bookings); // created + the later transitions
    expect(c!.rows).toBe(c!.events * 2); // the agent who created it + the tenant's developer managers
    expect(c!.active_holds).toBe(c!.active_bookings);
    // each booking's notifications are its tenant's and name its creator
    const wrong = await s`SELECT n.id FROM notifications.notifications n JOIN crm.bookings b ON b.id = n.booking_id
      WHERE n.tenant_id <> b.tenant_id OR (n.recipient_user_id IS NOT NULL AND n.recipient_user_id <> b.created_by)`;
    expect(wrong).toEqual([]);
    const types = (await s`SELECT DISTINCT type FROM notifications.notifications`).map((r) => r.type).sort();
    expect(types).toEqual(['BookingCancelled', 'BookingConfirmed', 'BookingCreated', 'BookingExpired', 'BookingPaid', 'DealSaleStarted']);
  }, 120_000);
});
