import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { actor, bookingRow, callerFor, insertDeal, insertProgram, timelineOf } from '../../test/fixtures/crm.fixtures';
import { bookingTimeline } from './schema';
import { projectedObjectOf } from '../../test/harness/crm-projection';

/**
 * Ordered history (issue 15): a transition's time is read under the booking's (or its deal's) row
 * lock, so a command that waited for another never records an earlier time than the one it waited
 * for (closedAt ≥ bookedAt); history and timeline are listed by booking version.
 */

const TENANT = randomUUID();
const agent = actor('agent', TENANT);
const manager = actor('developer_manager', TENANT);
let t: TestContext;
let program: { id: string };

beforeAll(async () => {
  t = await createTestContext();
  program = await insertProgram(t, TENANT, { reserveDurationMinutes: 60, bookingDurationHours: 48 });
});
afterAll(async () => {
  await t?.close();
});

async function newBooking() {
  const deal = await insertDeal(t, TENANT);
  const booking = await callerFor(t, agent).booking.create({ dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, TENANT), programId: program.id });
  return { deal, booking };
}

async function lockWaiters(): Promise<number> {
  const [row] = await t.database.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
  return row!.n;
}

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** the timeline rows in version order have non-decreasing times */
function expectTimesFollowVersions(rows: { bookingVersion: number; at: Date }[]) {
  const byVersion = [...rows].sort((a, b) => a.bookingVersion - b.bookingVersion);
  for (let i = 1; i < byVersion.length; i++) {
    expect(byVersion[i]!.at.getTime(), `v${byVersion[i]!.bookingVersion} at ≥ v${byVersion[i - 1]!.bookingVersion} at`).toBeGreaterThanOrEqual(byVersion[i - 1]!.at.getTime());
  }
}

describe('transition times are taken under the row lock', () => {
  it('a cancel that waited for the deal lock while a confirm committed closes the booking after it was booked', async () => {
    const { deal, booking } = await newBooking();
    // another transaction holds the deal: the cancel (deal → booking lock order) waits; the confirm (booking only) does not
    const holder = await t.database.sql.reserve();
    try {
      await holder`BEGIN`;
      await holder`SELECT id FROM crm.deals WHERE id = ${deal.id} FOR UPDATE`;
      const cancel = callerFor(t, manager).booking.cancel({ bookingId: booking.id, reason: 'client left' });
      await until(async () => (await lockWaiters()) === 1, 'the cancel to wait for the deal');
      const sentAt = Date.now();
      await until(() => Date.now() > sentAt + 5, 'the clock to move on');
      const confirmed = await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
      await holder`COMMIT`;
      const cancelled = await cancel;
      expect(cancelled.status).toBe('Cancelled');
      expect(cancelled.closedAt!.getTime()).toBeGreaterThanOrEqual(confirmed.bookedAt!.getTime());
      const row = await bookingRow(t, booking.id);
      expect(row.closedAt!.getTime()).toBeGreaterThanOrEqual(row.bookedAt!.getTime());
      expectTimesFollowVersions(await timelineOf(t, booking.id));
    } finally {
      await holder`ROLLBACK`.catch(() => {});
      holder.release();
    }
  });

  it('10 confirms and 10 cancels in parallel on one booking (5 rounds): never closedAt < bookedAt, timeline times follow versions', async () => {
    for (let round = 0; round < 5; round++) {
      const { booking } = await newBooking();
      const calls = Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? callerFor(t, agent).booking.confirm({ bookingId: booking.id })
          : callerFor(t, manager).booking.cancel({ bookingId: booking.id, reason: `cancel ${i}` }),
      );
      const results = await Promise.allSettled(calls);
      const row = await bookingRow(t, booking.id);
      expect(row.status).toBe('Cancelled');
      // one cancel and at most one confirm succeeded; every other call was refused with a domain code
      expect(results.filter((r, i) => i % 2 === 1 && r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r, i) => i % 2 === 0 && r.status === 'fulfilled').length).toBeLessThanOrEqual(1);
      for (const r of results) if (r.status === 'rejected') expect((r.reason as { cause?: { code?: string } }).cause?.code).toMatch(/^CRM_BOOKING_/);
      if (row.bookedAt) expect(row.closedAt!.getTime()).toBeGreaterThanOrEqual(row.bookedAt.getTime());
      const timeline = await timelineOf(t, booking.id);
      expect(timeline.map((r) => r.bookingVersion).sort()).toEqual(Array.from({ length: row.version }, (_, i) => i + 1));
      expectTimesFollowVersions(timeline);
    }
  });
});

describe('history is listed by version', () => {
  it('booking.byId lists the timeline by booking version even when a row was written with an earlier clock', async () => {
    const { booking } = await newBooking();
    await callerFor(t, agent).booking.confirm({ bookingId: booking.id });
    await callerFor(t, manager).booking.cancel({ bookingId: booking.id, reason: 'client left' });
    // v3 recorded by a replica whose clock is a minute behind
    const [v1] = await timelineOf(t, booking.id);
    await t.database.db
      .update(bookingTimeline)
      .set({ at: new Date(v1!.at.getTime() - 60_000) })
      .where(and(eq(bookingTimeline.bookingId, booking.id), eq(bookingTimeline.bookingVersion, 3)));
    const read = await callerFor(t, manager).booking.byId({ bookingId: booking.id });
    expect(read.timeline.map((r) => r.bookingVersion)).toEqual([1, 2, 3]);
  });
});
