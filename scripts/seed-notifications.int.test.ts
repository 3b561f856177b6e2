import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../test/harness/harness';
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
      (SELECT count(*)::int FROM crm.bookings WHERE status IN ('Reserved', 'AwaitingPayment', 'Booked')) AS active_bookings,
      (SELECT count(*)::int FROM notifications.inbox i JOIN notifications.notifications n ON n.message_id = i.message_id AND n.recipient = 'role:developer_manager'
         JOIN crm.deals d ON d.id = n.deal_id WHERE i.result = 'applied' AND d.investor_id IS NOT NULL) AS investor_events`;
    expect(c!.events).toBeGreaterThan(c!.bookings); // created + the later transitions
    // the agent who created it + the tenant's developer managers, + the investor of an investor's deal
    expect(c!.investor_events).toBeGreaterThan(0);
    expect(c!.rows).toBe(c!.events * 2 + c!.investor_events);
    expect(c!.active_holds).toBe(c!.active_bookings);
    // each booking's notifications are its tenant's and name its creator
    const wrong = await s`SELECT n.id FROM notifications.notifications n JOIN crm.bookings b ON b.id = n.booking_id
      JOIN crm.deals d ON d.id = b.deal_id
      WHERE n.tenant_id <> b.tenant_id OR (n.recipient_user_id IS NOT NULL AND n.recipient_user_id <> b.created_by AND n.recipient_user_id IS DISTINCT FROM d.investor_id)`;
    expect(wrong).toEqual([]);
    const types = (await s`SELECT DISTINCT type FROM notifications.notifications`).map((r) => r.type).sort();
    expect(types).toEqual(['BookingCancelled', 'BookingConfirmed', 'BookingCreated', 'BookingExpired', 'BookingPaid', 'DealSaleStarted']);
  }, 120_000);
});
