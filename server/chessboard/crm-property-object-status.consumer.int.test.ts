import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrmPayload, CrmTopic } from '../contracts/crm';
import { RejectMessage, type HandlerOutcome } from '../platform/kafka/consumer-runner';
import { TOPICS } from '../platform/kafka/topics';
import { renderMetrics } from '../platform/metrics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import {
  bookingOf, consumed, crmEnvelope, insertObjects, insertProject, readObject, statusChangedEvents, type Place,
} from '../../test/fixtures/chessboard.fixtures';
import { crmPropertyObjectStatusConsumer } from './crm-property-object-status.consumer';
import { PROPERTY_OBJECT_ERRORS } from './property-object';

let t: TestContext;
let place: Place;
beforeAll(async () => {
  t = await createTestContext();
  place = await insertProject(t.database);
});
afterAll(async () => { await t?.close(); });

const HOUR = 3600_000;
const inAnHour = () => new Date(Date.now() + HOUR);
const inTwoDays = () => new Date(Date.now() + 48 * HOUR);

type Delivery = { outcome: HandlerOutcome; messageId: string; correlationId: string } | { rejected: string; messageId: string };

/** Delivers one crm event the way the runner does: the handler in a transaction; a rejection's record in another. */
async function deliver<T extends CrmTopic>(topic: T, payload: CrmPayload<T>, opts: { messageId?: string; occurredAt?: Date } = {}): Promise<Delivery> {
  const envelope = crmEnvelope(topic, payload, opts);
  try {
    const outcome = await t.database.db.transaction((tx) => crmPropertyObjectStatusConsumer.handle(tx, consumed(topic, envelope), { logger: t.logger, env: t.env }));
    return { outcome, messageId: envelope.messageId, correlationId: envelope.correlationId };
  } catch (e) {
    if (!(e instanceof RejectMessage)) throw e;
    if (e.record) await t.database.db.transaction((tx) => e.record!(tx));
    return { rejected: e.code, messageId: envelope.messageId };
  }
}

const applied = (d: Delivery) => {
  expect(d).toHaveProperty('outcome');
  return d as Extract<Delivery, { outcome: HandlerOutcome }>;
};

async function oneFree(): Promise<string> {
  const [id] = await insertObjects(t.database, place, [{ status: 'Free' }]);
  return id;
}

async function history(objectId: string) {
  return t.database.sql<{ from_status: string; to_status: string; status_source: string; booking_id: string; deal_id: string; causation_id: string; message_id: string; version: number }[]>`
    SELECT * FROM chessboard.property_object_status_history WHERE property_object_id = ${objectId} ORDER BY id`;
}

async function clearRecalcRequest(): Promise<void> {
  await t.database.sql`UPDATE chessboard.projects SET aggregates_recalc_requested_at = NULL WHERE id = ${place.projectId}`;
}
async function recalcRequested(): Promise<boolean> {
  const [p] = await t.database.sql<{ r: boolean }[]>`SELECT aggregates_recalc_requested_at IS NOT NULL AS r FROM chessboard.projects WHERE id = ${place.projectId}`;
  return p.r;
}

describe('crm-property-object-status: the mapping', () => {
  it('booking-created → Reserve: Free → Reserved, reserved_until, hold deal; event + history + recalc request in the same tx', async () => {
    const id = await oneFree();
    const b = bookingOf(id);
    const reserveExpiresAt = new Date('2030-01-01T10:00:00.000Z');
    await clearRecalcRequest();
    const before = await readObject(t.database, id);
    const d = applied(await deliver(TOPICS.bookingCreated, b.created(reserveExpiresAt)));
    expect(d.outcome.result).toBe('applied');

    const o = await readObject(t.database, id);
    expect(o).toMatchObject({ status: 'Reserved', hold_deal_id: b.dealId, hold_booking_id: b.bookingId, booked_until: null, status_source: 'Crm', version: before.version + 1 });
    expect(o.reserved_until).toEqual(reserveExpiresAt);
    expect(o.status_changed_at.getTime()).toBeGreaterThan(before.status_changed_at.getTime());
    expect(o.updated_at).toEqual(o.status_changed_at);

    const [event] = await statusChangedEvents(t.database, id);
    expect(event.payload).toMatchObject({
      type: 'PropertyObjectStatusChanged', aggregateType: 'PropertyObject', aggregateId: id, tenantId: place.tenantId,
      correlationId: d.correlationId, causationId: d.messageId,
      payload: {
        propertyObjectId: id, tenantId: place.tenantId, projectId: place.projectId, buildingId: place.buildingId,
        fromStatus: 'Free', toStatus: 'Reserved', statusSource: 'Crm', reservedUntil: reserveExpiresAt.toISOString(), bookedUntil: null,
        holdDealId: b.dealId, soldAt: null, statusChangedAt: o.status_changed_at.toISOString(), version: o.version,
      },
    });
    const [h] = await history(id);
    expect(h).toMatchObject({ from_status: 'Free', to_status: 'Reserved', status_source: 'Crm', booking_id: b.bookingId, deal_id: b.dealId, causation_id: d.messageId, message_id: event.message_id, version: o.version });
    expect(await recalcRequested()).toBe(true);
    const [v] = await t.database.sql`SELECT applied_version, released FROM chessboard.crm_booking_versions WHERE booking_id = ${b.bookingId}`;
    expect(v).toEqual({ applied_version: 1, released: false });
  });

  it('the transition, its event, history and recalc request commit or roll back together', async () => {
    const id = await oneFree();
    const b = bookingOf(id);
    await clearRecalcRequest();
    const envelope = crmEnvelope(TOPICS.bookingCreated, b.created(inAnHour()));
    await expect(t.database.db.transaction(async (tx) => {
      await crmPropertyObjectStatusConsumer.handle(tx, consumed(TOPICS.bookingCreated, envelope), { logger: t.logger, env: t.env });
      throw new Error('crash before commit');
    })).rejects.toThrow('crash before commit');
    expect((await readObject(t.database, id)).status).toBe('Free');
    expect(await statusChangedEvents(t.database, id)).toHaveLength(0);
    expect(await history(id)).toHaveLength(0);
    expect(await recalcRequested()).toBe(false);
  });

  it('booking-confirmed → Book: Reserved → Booked, booked_until set, reserved_until cleared', async () => {
    const id = await oneFree();
    const b = bookingOf(id);
    await deliver(TOPICS.bookingCreated, b.created(inAnHour()));
    const until = new Date('2030-01-03T10:00:00.000Z');
    applied(await deliver(TOPICS.bookingConfirmed, b.confirmed(until)));
    const o = await readObject(t.database, id);
    expect(o).toMatchObject({ status: 'Booked', reserved_until: null, booked_until: until, hold_deal_id: b.dealId, status_source: 'Crm', version: 3 });
    const events = await statusChangedEvents(t.database, id);
    expect(events.map((e) => [e.payload.payload.fromStatus, e.payload.payload.toStatus])).toEqual([['Free', 'Reserved'], ['Reserved', 'Booked']]);
    expect(events[1].payload.payload).toMatchObject({ bookedUntil: until.toISOString(), reservedUntil: null, holdDealId: b.dealId });
  });

  it('booking-extended → booked_until moves (DESIGN 1)', async () => {
    const id = await oneFree();
    const b = bookingOf(id);
    await deliver(TOPICS.bookingCreated, b.created(inAnHour()));
    await deliver(TOPICS.bookingConfirmed, b.confirmed(inTwoDays()));
    const moved = new Date('2030-02-01T00:00:00.000Z');
    applied(await deliver(TOPICS.bookingExtended, b.extended(moved)));
    const o = await readObject(t.database, id);
    expect(o).toMatchObject({ status: 'Booked', booked_until: moved, version: 4 });
    const events = await statusChangedEvents(t.database, id);
    expect(events).toHaveLength(3);
    expect(events[2].payload.payload).toMatchObject({ fromStatus: 'Booked', toStatus: 'Booked', bookedUntil: moved.toISOString() });
  });

  for (const [name, topic, payloadOf] of [
    ['booking-expired', TOPICS.bookingExpired, (b: ReturnType<typeof bookingOf>, v: number) => b.expired(v)],
    ['booking-cancelled', TOPICS.bookingCancelled, (b: ReturnType<typeof bookingOf>, v: number) => b.cancelled(v)],
    ['deal-cancelled', TOPICS.dealCancelled, (b: ReturnType<typeof bookingOf>, v: number) => b.dealCancelled(v)],
  ] as const) {
    for (const held of ['Reserved', 'Booked'] as const) {
      it(`${name} → Release: ${held} → Free, timers and hold cleared`, async () => {
        const id = await oneFree();
        const b = bookingOf(id);
        await deliver(TOPICS.bookingCreated, b.created(inAnHour()));
        if (held === 'Booked') await deliver(TOPICS.bookingConfirmed, b.confirmed(inTwoDays()));
        const version = held === 'Booked' ? 3 : 2;
        applied(await deliver(topic as CrmTopic, payloadOf(b, version) as never));
        const o = await readObject(t.database, id);
        expect(o).toMatchObject({ status: 'Free', reserved_until: null, booked_until: null, hold_deal_id: null, hold_booking_id: null, status_source: 'Crm', version: version + 1 });
        const events = await statusChangedEvents(t.database, id);
        expect(events.at(-1)!.payload.payload).toMatchObject({ fromStatus: held, toStatus: 'Free', statusSource: 'Crm', reservedUntil: null, bookedUntil: null, holdDealId: null });
        const [v] = await t.database.sql`SELECT released FROM chessboard.crm_booking_versions WHERE booking_id = ${b.bookingId}`;
        expect(v.released).toBe(true);
      });
    }
  }

  it('deal-sale-started → MarkSold: Booked → Sold, sold_at, timers and hold cleared (DESIGN 2)', async () => {
    const id = await oneFree();
    const b = bookingOf(id);
    await deliver(TOPICS.bookingCreated, b.created(inAnHour()));
    await deliver(TOPICS.bookingConfirmed, b.confirmed(inTwoDays()));
    const startedAt = new Date('2030-01-02T12:00:00.000Z');
    applied(await deliver(TOPICS.dealSaleStarted, b.saleStarted(startedAt)));
    const o = await readObject(t.database, id);
    expect(o).toMatchObject({ status: 'Sold', sold_at: startedAt, booked_until: null, reserved_until: null, hold_deal_id: null, status_source: 'Crm', version: 4 });
    expect((await statusChangedEvents(t.database, id)).at(-1)!.payload.payload).toMatchObject({ fromStatus: 'Booked', toStatus: 'Sold', soldAt: startedAt.toISOString() });
  });

  it('booking-paid is not consumed by chessboard', () => {
    expect(crmPropertyObjectStatusConsumer.topics).not.toContain(TOPICS.bookingPaid);
    expect(crmPropertyObjectStatusConsumer).toMatchObject({ name: 'chessboard.crm-property-object-status', inbox: 'chessboard' });
  });

  it('deal-cancelled without a booking is a no-op', async () => {
    const d = applied(await deliver(TOPICS.dealCancelled, {
      dealId: randomUUID(), tenantId: place.tenantId, bookingId: null, propertyObjectId: null, bookingVersion: null, reason: 'x', cancelledAt: new Date().toISOString(),
    }));
    expect(d.outcome.result).toBe('no-op');
  });
});

describe('crm-property-object-status: guards and reordering', () => {
  it('INV-CHS-003: an event of another deal → HOLD_MISMATCH to the DLQ, a hold_mismatches row, object untouched, metric', async () => {
    const id = await oneFree();
    const holder = bookingOf(id);
    await deliver(TOPICS.bookingCreated, holder.created(inAnHour()));
    const before = await readObject(t.database, id);
    const intruder = bookingOf(id);
    const metricBefore = await mismatchMetric(TOPICS.bookingCancelled);

    const d = await deliver(TOPICS.bookingCancelled, intruder.cancelled());
    expect(d).toMatchObject({ rejected: PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH });
    expect(await readObject(t.database, id)).toEqual(before);
    expect(await statusChangedEvents(t.database, id)).toHaveLength(1);
    const rows = await t.database.sql`SELECT * FROM chessboard.hold_mismatches WHERE property_object_id = ${id}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      message_id: d.messageId, topic: TOPICS.bookingCancelled, booking_id: intruder.bookingId, event_deal_id: intruder.dealId,
      hold_deal_id: holder.dealId, object_status: 'Reserved', tenant_id: place.tenantId,
    });
    expect(await mismatchMetric(TOPICS.bookingCancelled)).toBe(metricBefore + 1);
  });

  it('DESIGN decision 9: a create of another deal OLDER than the holding booking is a logged no-op (no DLQ, no HOLD_MISMATCH), object untouched', async () => {
    const id = await oneFree();
    const t0 = Date.now();
    await deliver(TOPICS.bookingCreated, bookingOf(id).created(inAnHour()), { occurredAt: new Date(t0) });
    const before = await readObject(t.database, id);
    const late = bookingOf(id);
    expect(await deliver(TOPICS.bookingCreated, late.created(inAnHour()), { occurredAt: new Date(t0 - 60_000) }))
      .toMatchObject({ outcome: { result: 'no-op', detail: expect.stringContaining('older than') } });
    expect(await readObject(t.database, id)).toEqual(before);
    expect(await t.database.sql`SELECT 1 FROM chessboard.hold_mismatches WHERE property_object_id = ${id}`).toHaveLength(0);
    // its tombstone: the older booking's own late confirm is a no-op too
    expect(await deliver(TOPICS.bookingConfirmed, late.confirmed(inAnHour()))).toMatchObject({ outcome: { result: 'no-op', detail: expect.stringContaining('already released') } });
  });

  it('DESIGN decision 7: a create of another deal NEWER than the holding booking takes the hold over; the old booking\'s late events are no-ops', async () => {
    const id = await oneFree();
    const t0 = Date.now();
    const old = bookingOf(id);
    const next = bookingOf(id);
    await deliver(TOPICS.bookingCreated, old.created(inAnHour()), { occurredAt: new Date(t0) });
    const until = new Date(Date.now() + 30 * 60_000);
    const taken = await deliver(TOPICS.bookingCreated, next.created(until), { occurredAt: new Date(t0 + 60_000) });
    expect(taken).toMatchObject({ outcome: { result: 'applied', detail: expect.stringContaining('taken over') } });
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Reserved', hold_deal_id: next.dealId, hold_booking_id: next.bookingId, reserved_until: until });
    const history = await t.database.sql<{ from_status: string; to_status: string; booking_id: string; deal_id: string; reason: string }[]>`
      SELECT from_status, to_status, booking_id::text, deal_id::text, reason FROM chessboard.property_object_status_history WHERE property_object_id = ${id} ORDER BY id`;
    expect(history.slice(-2)).toEqual([
      { from_status: 'Reserved', to_status: 'Free', booking_id: old.bookingId, deal_id: old.dealId, reason: expect.stringContaining('DESIGN decision 9') },
      { from_status: 'Free', to_status: 'Reserved', booking_id: next.bookingId, deal_id: next.dealId, reason: expect.stringContaining('DESIGN decision 9') },
    ]);
    // the old booking's release arrives late: a logged no-op, not a HOLD_MISMATCH; the hold stays with the new booking
    const late = await deliver(TOPICS.bookingCancelled, old.cancelled(), { occurredAt: new Date(t0 + 30_000) });
    expect(late).toMatchObject({ outcome: { result: 'no-op', detail: expect.stringContaining('already released') } });
    // a confirm of a booking that does not hold the object and that nothing places in time is still refused (INV-CHS-003)
    expect(await deliver(TOPICS.bookingConfirmed, bookingOf(id).confirmed(inAnHour()))).toMatchObject({ rejected: PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH });
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Reserved', hold_booking_id: next.bookingId });
  });

  it('Reserve of a Sold or Hidden object → NOT_AVAILABLE (DLQ), object untouched', async () => {
    const [sold, hidden] = await insertObjects(t.database, place, [{ status: 'Sold' }, { status: 'Hidden' }]);
    for (const id of [sold, hidden]) {
      const before = await readObject(t.database, id);
      expect(await deliver(TOPICS.bookingCreated, bookingOf(id).created(inAnHour()))).toMatchObject({ rejected: PROPERTY_OBJECT_ERRORS.NOT_AVAILABLE });
      expect(await readObject(t.database, id)).toEqual(before);
    }
  });

  it('an unknown property object (or one of another tenant) → NOT_FOUND', async () => {
    expect(await deliver(TOPICS.bookingCreated, bookingOf(randomUUID()).created(inAnHour()))).toMatchObject({ rejected: PROPERTY_OBJECT_ERRORS.NOT_FOUND });
    const id = await oneFree();
    expect(await deliver(TOPICS.bookingCreated, bookingOf(id, '0a000000-0000-4000-8000-0000000000ff').created(inAnHour()))).toMatchObject({ rejected: PROPERTY_OBJECT_ERRORS.NOT_FOUND });
  });

  it('a release for an object chessboard no longer has (deleted) is a no-op, not the DLQ; of another tenant\'s object still NOT_FOUND', async () => {
    const gone = randomUUID();
    expect(await deliver(TOPICS.bookingCancelled, bookingOf(gone).cancelled())).toMatchObject({ outcome: { result: 'no-op', detail: expect.stringContaining('no such property object') } });
    expect(await deliver(TOPICS.bookingExpired, bookingOf(gone).expired())).toMatchObject({ outcome: { result: 'no-op' } });
    const id = await oneFree();
    expect(await deliver(TOPICS.bookingCancelled, bookingOf(id, '0a000000-0000-4000-8000-0000000000ff').cancelled())).toMatchObject({ rejected: PROPERTY_OBJECT_ERRORS.NOT_FOUND });
  });

  it('a release of an already Free object is an idempotent no-op, not a mismatch', async () => {
    const id = await oneFree();
    const before = await readObject(t.database, id);
    const d = applied(await deliver(TOPICS.bookingExpired, bookingOf(id).expired()));
    expect(d.outcome.result).toBe('no-op');
    expect(await readObject(t.database, id)).toEqual(before);
    expect(await statusChangedEvents(t.database, id)).toHaveLength(0);
    expect(await t.database.sql`SELECT 1 FROM chessboard.hold_mismatches WHERE property_object_id = ${id}`).toHaveLength(0);
  });

  it('DESIGN 3: an event older than the applied bookingVersion is a logged no-op', async () => {
    const id = await oneFree();
    const b = bookingOf(id);
    await deliver(TOPICS.bookingCreated, b.created(inAnHour()));
    await deliver(TOPICS.bookingConfirmed, b.confirmed(inTwoDays(), 2));
    await deliver(TOPICS.bookingExtended, b.extended(new Date('2030-05-01T00:00:00Z'), 4));
    const before = await readObject(t.database, id);
    // an extend of version 3 overtaken by the one of version 4
    const d = applied(await deliver(TOPICS.bookingExtended, b.extended(new Date('2030-04-01T00:00:00Z'), 3)));
    expect(d.outcome).toMatchObject({ result: 'no-op', detail: expect.stringContaining('stale bookingVersion 3') });
    expect(await readObject(t.database, id)).toEqual(before);
    expect(t.logLines().some((l) => l.msg === 'crm booking event is a no-op' && l.bookingId === b.bookingId && String(l.reason).includes('stale'))).toBe(true);
  });

  it('DESIGN 3: a cancel that overtakes its create leaves a tombstone; the late create does not re-hold', async () => {
    const id = await oneFree();
    const b = bookingOf(id);
    expect(applied(await deliver(TOPICS.bookingCancelled, b.cancelled(2))).outcome.result).toBe('no-op');
    const late = applied(await deliver(TOPICS.bookingCreated, b.created(inAnHour(), 1)));
    expect(late.outcome.result).toBe('no-op');
    expect((await readObject(t.database, id)).status).toBe('Free');
    expect(await statusChangedEvents(t.database, id)).toHaveLength(0);
  });

  it('DESIGN 3: a confirm that overtakes its create books the object (catch-up); the late create is a no-op', async () => {
    const id = await oneFree();
    const b = bookingOf(id);
    const until = new Date('2030-01-05T00:00:00.000Z');
    applied(await deliver(TOPICS.bookingConfirmed, b.confirmed(until, 2)));
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Booked', booked_until: until, hold_deal_id: b.dealId, hold_booking_id: b.bookingId });
    expect(applied(await deliver(TOPICS.bookingCreated, b.created(inAnHour(), 1))).outcome.result).toBe('no-op');
    expect((await readObject(t.database, id)).status).toBe('Booked');
  });

  it('a stale release of an earlier booking of the same deal does not free the new booking’s hold', async () => {
    const id = await oneFree();
    const dealId = randomUUID();
    const first = bookingOf(id, place.tenantId, { dealId });
    const second = bookingOf(id, place.tenantId, { dealId });
    await deliver(TOPICS.bookingCreated, first.created(inAnHour()));
    // the second booking's create overtakes the first one's cancel: the hold moves to the second booking
    const d = applied(await deliver(TOPICS.bookingCreated, second.created(inAnHour())));
    expect(d.outcome.result).toBe('applied');
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Reserved', hold_booking_id: second.bookingId });
    expect(applied(await deliver(TOPICS.bookingCancelled, first.cancelled())).outcome.result).toBe('no-op');
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Reserved', hold_booking_id: second.bookingId });
  });
});

async function mismatchMetric(topic: string): Promise<number> {
  const { body } = await renderMetrics();
  const line = body.split('\n').find((l) => l.startsWith(`chessboard_crm_hold_mismatch_total{topic="${topic}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
