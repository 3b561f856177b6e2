import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../test/harness/harness';
import { seed } from './seed';

let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

describe('demo seed', () => {
  it('is idempotent, realistic in size and consistent between crm and chessboard', async () => {
    const first = await seed(t.url, () => {});
    expect(first.inserted).toBe(true);
    expect(first.objects).toBeGreaterThan(1400);
    expect(first.objects).toBeLessThan(1600);
    const counts = async () => (await t.database.sql`SELECT
      (SELECT count(*)::int FROM chessboard.property_objects) AS objects,
      (SELECT count(*)::int FROM crm.bookings) AS bookings,
      (SELECT count(*)::int FROM chessboard.outbox) AS events,
      (SELECT count(*)::int FROM catalog.property_object_cards) AS cards,
      (SELECT count(*)::int FROM messenger.messages) AS chat_entries`)[0];
    const before = await counts();
    const second = await seed(t.url, () => {});
    expect(second.inserted).toBe(false);
    expect(await counts()).toEqual(before);

    const s = t.database.sql;
    const [shape] = await s`SELECT count(DISTINCT tenant_id)::int AS tenants, (SELECT count(*)::int FROM chessboard.projects) AS projects,
      (SELECT count(*)::int FROM chessboard.buildings) AS buildings, (SELECT min(floors)::int FROM chessboard.buildings) AS min_floors,
      (SELECT max(floors)::int FROM chessboard.buildings) AS max_floors FROM chessboard.projects`;
    expect(shape).toEqual({ tenants: 2, projects: 3, buildings: 5, min_floors: 9, max_floors: 25 });

    const statuses = (await s`SELECT DISTINCT status FROM chessboard.property_objects`).map((r) => r.status).sort();
    expect(statuses).toEqual(['Booked', 'Free', 'Hidden', 'Reserved', 'Sold']);
    const bookingStatuses = (await s`SELECT DISTINCT status FROM crm.bookings`).map((r) => r.status).sort();
    expect(bookingStatuses).toEqual(['AwaitingPayment', 'Booked', 'BookingExpired', 'Cancelled', 'Completed', 'ReserveExpired', 'Reserved']);

    // every active booking's object is held by its deal with equal timers
    const inconsistent = await s`SELECT b.id FROM crm.bookings b JOIN chessboard.property_objects o ON o.id = b.property_object_id
      WHERE b.status IN ('Reserved', 'AwaitingPayment', 'Booked') AND NOT (
        o.hold_deal_id = b.deal_id AND o.hold_booking_id = b.id AND (
          (b.status = 'Booked' AND o.status = 'Booked' AND o.booked_until = b.booking_expires_at) OR
          (b.status <> 'Booked' AND o.status = 'Reserved' AND o.reserved_until = b.reserve_expires_at)))`;
    expect(inconsistent).toEqual([]);
    // crm's projection has every booked object's floor and room count (the reports' floor and room split)
    const [layout] = await s`SELECT count(*)::int AS n FROM crm.bookings b JOIN crm.property_objects c ON c.id = b.property_object_id
      JOIN chessboard.property_objects o ON o.id = b.property_object_id
      WHERE c.floor IS DISTINCT FROM o.floor OR c.rooms IS DISTINCT FROM o.rooms`;
    expect(layout.n).toBe(0);
    const [paid] = await s`SELECT count(*)::int AS n FROM crm.bookings WHERE status = 'AwaitingPayment' AND payment_status = 'ReceiptUploaded'`;
    expect(paid.n).toBeGreaterThan(0);

    // lost releases: held past the 10-minute grace while crm's booking has already expired
    const [stuck] = await s`SELECT count(*)::int AS n FROM chessboard.property_objects o
      WHERE (o.reserved_until < now() - interval '10 minutes' OR o.booked_until < now() - interval '10 minutes')
        AND NOT EXISTS (SELECT 1 FROM crm.bookings b WHERE b.property_object_id = o.id AND b.status IN ('Reserved', 'AwaitingPayment', 'Booked'))`;
    expect(stuck.n).toBeGreaterThanOrEqual(2);

    const [catalog] = await s`SELECT
      (SELECT count(*)::int FROM catalog.property_object_cards WHERE status = 'Delisted' AND updated_at < now() - interval '30 days') AS old_objects,
      (SELECT count(*)::int FROM catalog.project_cards WHERE status = 'Delisted' AND updated_at < now() - interval '30 days') AS old_projects,
      (SELECT count(*)::int FROM catalog.property_object_display_overrides WHERE deleted_at IS NOT NULL) AS soft_deleted_overrides,
      (SELECT count(*)::int FROM catalog.developer_ranking_rules) AS ranking_rules,
      (SELECT count(*)::int FROM auth.users) AS users`;
    expect(catalog.old_objects).toBeGreaterThan(0);
    expect(catalog.old_projects).toBe(1);
    expect(catalog.soft_deleted_overrides).toBeGreaterThan(0);
    expect(catalog.ranking_rules).toBeGreaterThan(0);
    expect(catalog.users).toBeGreaterThanOrEqual(5);
    const roles = (await s`SELECT DISTINCT role FROM auth.users`).map((r) => r.role).sort();
    expect(roles).toEqual(['agent', 'developer_manager', 'investor', 'ops', 'pin_manager', 'viewer']);
    // the investor's deals are with both developers; every seeded paid booking has its one accrual, made by rewards' consumer
    const [investor] = await s`SELECT count(DISTINCT d.tenant_id)::int AS developers, count(*)::int AS deals FROM crm.deals d
      JOIN auth.users u ON u.id = d.investor_id WHERE u.email = 'investor@pin.local'`;
    expect(investor.developers).toBe(2);
    const unrewarded = await s`SELECT b.id FROM crm.bookings b LEFT JOIN rewards.accruals a ON a.booking_id = b.id
      WHERE b.payment_status = 'Paid' AND (a.booking_id IS NULL OR a.status <> 'accrued' OR a.amount <= 0 OR a.agent_id <> b.created_by)`;
    expect(unrewarded).toEqual([]);
    const [accrualCount] = await s`SELECT count(*)::int AS n FROM rewards.accruals`;
    const [paidCount] = await s`SELECT count(*)::int AS n FROM crm.bookings WHERE payment_status = 'Paid'`;
    expect(accrualCount.n).toBe(paidCount.n);

    // deal chats (issue 20): made by the messenger consumer's handler from the bookings' events — every
    // booking's deal has a chat in its tenant with its agent, and the cards its status went through
    const chatless = await s`SELECT b.id FROM crm.bookings b JOIN crm.deals d ON d.id = b.deal_id
      LEFT JOIN messenger.deal_chats c ON c.deal_id = b.deal_id AND c.tenant_id = b.tenant_id AND c.agent_id = d.agent_id WHERE c.deal_id IS NULL`;
    expect(chatless).toEqual([]);
    const expectedCards: Record<string, string[]> = {
      Reserved: ['booking-created'], AwaitingPayment: ['booking-created'], Booked: ['booking-created', 'booking-confirmed'],
      Completed: ['booking-created', 'booking-confirmed', 'sale-started'], ReserveExpired: ['booking-created', 'reserve-expired'],
      BookingExpired: ['booking-created', 'booking-confirmed', 'booking-expired'], Cancelled: ['booking-created', 'booking-cancelled'],
    };
    const cards = await s<{ status: string; payment_status: string; cards: string[] }[]>`SELECT b.status, b.payment_status,
      array(SELECT m.card_type FROM messenger.messages m WHERE m.booking_id = b.id ORDER BY m.occurred_at, m.id) AS cards FROM crm.bookings b`;
    for (const b of cards) {
      const want = b.payment_status === 'Paid' && b.status === 'Booked' ? ['booking-created', 'booking-paid', 'booking-confirmed'] : expectedCards[b.status];
      expect(b.cards, b.status).toEqual(want);
    }
    const [inbox] = await s`SELECT count(*)::int AS n, count(*) FILTER (WHERE result = 'applied')::int AS applied FROM messenger.inbox`;
    expect(inbox.applied).toBe(inbox.n);
    expect(inbox.n).toBe(before.chat_entries);
  });
});
