import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../server/auth/actor';
import { cancelBookingCommand } from '../../server/crm/commands/cancel-booking';
import { confirmBookingCommand } from '../../server/crm/commands/confirm-booking';
import { createBookingCommand } from '../../server/crm/commands/create-booking';
import { TOPICS } from '../../server/platform/kafka/topics';
import { createLogger } from '../../server/platform/logger';
import { createTestContext, type TestContext } from '../harness/harness';
import { deliverCrmEvent, type OutboxRow } from './helpers/consumer-emulation';
import { projectObjects } from '../harness/crm-projection';
import { commandContext } from '../../server/platform/command-context';

/**
 * Regression of the bug the randomized interleavings found (fast-check counterexample, shrunk):
 * a deal books an object (booking A), cancels it, books the same object again (booking B) and confirms
 * B. booking-created of A travels on another partition than booking-created of B and may be consumed
 * AFTER it. The consumer took the late create of A for a newer booking that supersedes the hold: it
 * released B's hold, reserved the object for A, and A's cancel then freed it — chessboard Free while
 * crm holds a Booked booking (and B's tombstone ignored its later events). Fix: crm's event time
 * (envelope occurredAt, kept per booking in chessboard.crm_booking_versions.last_event_at) tells which
 * of two bookings of one deal is the earlier one (INV-BKG-001: one ended before the other began).
 */

let t: TestContext;
const logger = createLogger('faults-regression', { level: 'silent' });
const pin: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };
const tenantId = randomUUID();
const projectId = randomUUID();
const buildingId = randomUUID();
const programId = randomUUID();
const T0 = new Date('2026-04-01T10:00:00.000Z');

beforeAll(async () => {
  t = await createTestContext();
  const { sql } = t.database;
  await sql`INSERT INTO chessboard.projects (id, tenant_id, name, city) VALUES (${projectId}, ${tenantId}, 'P', 'C')`;
  await sql`INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors) VALUES (${buildingId}, ${tenantId}, ${projectId}, 'B', 1, 9)`;
  await sql`INSERT INTO crm.booking_programs (id, tenant_id, name, is_paid, reserve_duration_minutes, booking_duration_hours)
            VALUES (${programId}, ${tenantId}, 'Free', false, 60, 48)`;
});
afterAll(async () => { await t?.close(); });

/** A deal that booked the object (A), cancelled, booked it again (B) and confirmed B; the crm events by name. */
async function rebookedObject() {
  const { db, sql } = t.database;
  const objectId = randomUUID();
  const dealId = randomUUID();
  await sql`INSERT INTO chessboard.property_objects (id, tenant_id, project_id, building_id, section, floor, number, rooms, area, price, status, status_source, version)
            VALUES (${objectId}, ${tenantId}, ${projectId}, ${buildingId}, 1, 1, ${objectId.slice(0, 6)}, 1, 40, 5000000, 'Free', 'Import', 1)`;
  await projectObjects(t.database, [{ id: objectId, tenantId, projectId }]);
  await sql`INSERT INTO crm.deals (id, tenant_id, title, status) VALUES (${dealId}, ${tenantId}, 'Deal', 'Application')`;
  const at = (s: number) => commandContext(pin, randomUUID(), new Date(T0.getTime() + s * 1000));
  const a = await db.transaction((tx) => createBookingCommand(tx, { dealId, propertyObjectId: objectId, programId }, at(0)));
  await db.transaction((tx) => cancelBookingCommand(tx, { bookingId: a.id, reason: 'another program' }, at(1)));
  const b = await db.transaction((tx) => createBookingCommand(tx, { dealId, propertyObjectId: objectId, programId }, at(2)));
  const bBooked = await db.transaction((tx) => confirmBookingCommand(tx, { bookingId: b.id }, at(3)));
  const rows = await sql<(OutboxRow & { aggregate_id: string })[]>`SELECT message_id::text, topic, payload, aggregate_id::text FROM crm.outbox WHERE aggregate_id IN (${a.id}, ${b.id}) ORDER BY id`;
  const ev = (bookingId: string, topic: string) => rows.find((r) => r.aggregate_id === bookingId && r.topic === topic)!;
  return {
    objectId, dealId, a, b: bBooked,
    createdA: ev(a.id, TOPICS.bookingCreated), cancelledA: ev(a.id, TOPICS.bookingCancelled),
    createdB: ev(b.id, TOPICS.bookingCreated), confirmedB: ev(b.id, TOPICS.bookingConfirmed),
  };
}

const objectOf = async (id: string) => {
  const [row] = await t.database.sql<{ status: string; hold_deal_id: string | null; hold_booking_id: string | null; booked_until: string | null }[]>`
    SELECT status, hold_deal_id::text, hold_booking_id::text, booked_until FROM chessboard.property_objects WHERE id = ${id}`;
  return { ...row!, booked_until: row!.booked_until ? new Date(row!.booked_until).toISOString() : null };
};

/** The runbook's DLQ requeue: every rejected message of the object is consumed once more. */
async function requeueRejected(rows: OutboxRow[], now: Date): Promise<number> {
  let n = 0;
  for (const row of rows) {
    const [r] = await t.database.sql`SELECT result FROM chessboard.inbox WHERE message_id = ${row.message_id}`;
    if (r?.result !== 'rejected') continue;
    await t.database.sql`DELETE FROM chessboard.inbox WHERE message_id = ${row.message_id}`;
    await deliverCrmEvent(t.database, row, { now, logger });
    n++;
  }
  return n;
}

describe('two bookings of one deal on one object, their events out of order (DESIGN decision 3)', () => {
  it('the earlier booking\'s create consumed after the later booking\'s events does not take the hold (the object stays Booked by the later booking)', async () => {
    const s = await rebookedObject();
    const now = new Date(T0.getTime() + 10_000);
    for (const row of [s.createdB, s.confirmedB]) expect((await deliverCrmEvent(t.database, row, { now, logger })).outcome).toBe('applied');
    const late = await deliverCrmEvent(t.database, s.createdA, { now, logger });
    expect(late).toMatchObject({ outcome: 'no-op' });
    expect(late.detail).toContain('older than the hold\'s booking');
    expect((await deliverCrmEvent(t.database, s.cancelledA, { now, logger })).outcome).toBe('no-op');
    expect(await objectOf(s.objectId)).toMatchObject({ status: 'Booked', hold_deal_id: s.dealId, hold_booking_id: s.b.id, booked_until: s.b.bookingExpiresAt!.toISOString() });
  });

  it('the later booking\'s create consumed before the earlier booking\'s release still supersedes the hold (the earlier booking ended)', async () => {
    const s = await rebookedObject();
    const now = new Date(T0.getTime() + 10_000);
    expect((await deliverCrmEvent(t.database, s.createdA, { now, logger })).outcome).toBe('applied');
    const superseding = await deliverCrmEvent(t.database, s.createdB, { now, logger });
    expect(superseding).toMatchObject({ outcome: 'applied' });
    expect(superseding.detail).toContain('hold taken over');
    for (const row of [s.cancelledA, s.confirmedB]) await deliverCrmEvent(t.database, row, { now, logger });
    expect(await objectOf(s.objectId)).toMatchObject({ status: 'Booked', hold_deal_id: s.dealId, hold_booking_id: s.b.id });
  });

  it('every order of the four events ends with the object Booked by the later booking, with no refusal and no DLQ requeue (DESIGN decision 9)', async () => {
    const orders = permutations([0, 1, 2, 3]);
    let requeued = 0;
    for (const order of orders) {
      const s = await rebookedObject();
      const events = [s.createdA, s.cancelledA, s.createdB, s.confirmedB];
      const now = new Date(T0.getTime() + 10_000);
      for (const i of order) await deliverCrmEvent(t.database, events[i]!, { now, logger });
      // B's confirm consumed while A still holds moves the hold to B (B is the newer booking): nothing to requeue
      requeued += await requeueRejected(events, now);
      expect(await objectOf(s.objectId), `order ${order.join(',')}`).toMatchObject({ status: 'Booked', hold_booking_id: s.b.id });
    }
    expect(requeued).toBe(0);
  });
});

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}
