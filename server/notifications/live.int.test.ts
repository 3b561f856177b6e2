import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureLiveListener, openLiveStream, type LiveEvent } from '../chessboard/live-feed';
import { crmContracts } from '../contracts/crm';
import type { AnyEnvelope } from '../contracts/envelope';
import { TOPICS } from '../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { eventually } from '../../test/harness/saga-harness';
import { notificationsBookingEventsConsumer } from './booking-events.consumer';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
  await ensureLiveListener(t.database, t.logger);
});
afterAll(async () => { await t?.close(); });

describe('notifications on the live feed', () => {
  it('a new notification signals the streams of its tenant (and the all-tenant ones), never another tenant\'s; a replay signals nothing', async () => {
    const [tenantA, tenantB] = [randomUUID(), randomUUID()];
    const streams = await Promise.all([tenantA, tenantB, null].map(async (tenantId) => {
      const events: LiveEvent[] = [];
      const close = await openLiveStream({ tenantId, revocationKey: randomUUID(), building: null, notify: (e) => events.push(e), revoked: () => {} });
      return { events, close };
    }));
    const [a, b, all] = streams as [typeof streams[0], typeof streams[0], typeof streams[0]];
    const payload = {
      bookingId: randomUUID(), dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId: tenantA, createdBy: randomUUID(), bookingVersion: 1,
      programId: randomUUID(), status: 'Reserved' as const, reserveExpiresAt: new Date(Date.now() + 3600_000).toISOString(), createdAt: new Date().toISOString(),
    };
    const envelope = crmContracts[TOPICS.bookingCreated].parse({
      messageId: randomUUID(), type: 'BookingCreated', contractVersion: 1, aggregateType: 'Booking', aggregateId: payload.bookingId,
      occurredAt: new Date().toISOString(), tenantId: tenantA, correlationId: randomUUID(), causationId: null, payload,
    }) as AnyEnvelope;
    const apply = () => t.database.db.transaction((tx) => notificationsBookingEventsConsumer.handle(tx, { topic: TOPICS.bookingCreated, envelope, partition: 0, offset: '0' }, { logger: t.logger, env: t.env }));
    await apply();
    await eventually(async () => a.events.includes('notifications'), 'tenant A hears its notification', 10_000);
    expect(all.events).toContain('notifications');
    expect(b.events).toEqual([]);
    a.events.length = 0;
    expect(await apply()).toMatchObject({ result: 'no-op' });
    await new Promise((r) => setTimeout(r, 500));
    expect(a.events).toEqual([]);
    for (const s of streams) s.close();
  });
});
