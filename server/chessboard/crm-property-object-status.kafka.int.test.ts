import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOPICS, withPrefix } from '../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { startBrokerPipeline, type BrokerPipeline } from '../../test/harness/kafka';
import {
  bookingOf, crmEnvelope, eventually, insertObjects, insertProject, jobContext, readObject, statusChangedEvents, type Place,
} from '../../test/fixtures/chessboard.fixtures';
import { crmPropertyObjectStatusConsumer } from './crm-property-object-status.consumer';
import { createPropertyObjectHoldExpirationJob } from './property-object-hold-expiration.job';
import { PROPERTY_OBJECT_ERRORS } from './property-object';

/** The consumer through the real broker: crm outbox → relay → Kafka → startConsumer → chessboard. */

let t: TestContext;
let place: Place;
let pipe: BrokerPipeline;

beforeAll(async () => {
  t = await createTestContext({ kafka: true });
  place = await insertProject(t.database);
  pipe = await startBrokerPipeline(t, 'crm', crmPropertyObjectStatusConsumer);
}, 120_000);

afterAll(async () => {
  await pipe?.close();
  await t?.close();
});

async function inbox(messageId: string) {
  const rows = await t.database.sql<{ result: string; detail: string | null }[]>`
    SELECT result, detail FROM chessboard.inbox WHERE consumer = ${crmPropertyObjectStatusConsumer.name} AND message_id = ${messageId}`;
  return rows[0];
}
const processed = (messageId: string) => eventually(() => inbox(messageId), 60_000, `inbox row of ${messageId}`);

describe('crm-property-object-status through Kafka', () => {
  it('booking-created published by the crm outbox reserves the object; status-changed caused by the crm message', async () => {
    const [id] = await insertObjects(t.database, place, [{ status: 'Free' }]);
    const b = bookingOf(id);
    const messageId = await pipe.publishCrm(TOPICS.bookingCreated, b.created(new Date(Date.now() + 3600_000)));
    expect(await processed(messageId)).toMatchObject({ result: 'applied' });
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Reserved', hold_deal_id: b.dealId });
    const [event] = await statusChangedEvents(t.database, id);
    expect(event.payload.causationId).toBe(messageId);
  }, 90_000);

  it('a duplicate messageId is a no-op (runner inbox): one transition, one event', async () => {
    const [id] = await insertObjects(t.database, place, [{ status: 'Free' }]);
    const b = bookingOf(id);
    const envelope = crmEnvelope(TOPICS.bookingCreated, b.created(new Date(Date.now() + 3600_000)));
    const marker = crmEnvelope(TOPICS.bookingCreated, b.created(new Date(Date.now() + 3600_000)));
    const send = (e: typeof envelope) => pipe.producer.send({
      topic: withPrefix(t.prefix, TOPICS.bookingCreated), acks: -1, messages: [{ key: b.bookingId, value: JSON.stringify(e) }],
    });
    await send(envelope);
    await send(envelope); // redelivery of the same message
    await send(marker); // same key → same partition: processed after the duplicate
    await processed(marker.messageId);
    expect(await inbox(envelope.messageId)).toMatchObject({ result: 'applied' });
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Reserved', version: 2 });
    expect(await statusChangedEvents(t.database, id)).toHaveLength(1);
  }, 90_000);

  it('race: the job releases first → the late CRM release through Kafka is a no-op, no HOLD_MISMATCH', async () => {
    const dealId = randomUUID();
    const bookingId = randomUUID();
    const [id] = await insertObjects(t.database, place, [{ status: 'Booked', timer: new Date(Date.now() - 30 * 60_000), holdDealId: dealId, holdBookingId: bookingId }]);
    const summary = await createPropertyObjectHoldExpirationJob().run(jobContext(t));
    expect(summary).toMatchObject({ BookedReleasedCount: 1 });

    const b = bookingOf(id, place.tenantId, { bookingId, dealId });
    const messageId = await pipe.publishCrm(TOPICS.bookingExpired, b.expired(3, 'Booking'));
    expect(await processed(messageId)).toMatchObject({ result: 'no-op' });
    expect(await readObject(t.database, id)).toMatchObject({ status: 'Free', status_source: 'ExpirationJob' });
    expect(await statusChangedEvents(t.database, id)).toHaveLength(1);
    expect(await t.database.sql`SELECT 1 FROM chessboard.hold_mismatches WHERE property_object_id = ${id}`).toHaveLength(0);
  }, 90_000);

  it('INV-CHS-003 through the runner: the mismatch goes to the DLQ, inbox rejected, hold_mismatches row for ops', async () => {
    const [id] = await insertObjects(t.database, place, [{ status: 'Reserved', timer: new Date(Date.now() + 3600_000) }]);
    const before = await readObject(t.database, id);
    const messageId = await pipe.publishCrm(TOPICS.bookingCancelled, bookingOf(id).cancelled());
    expect(await processed(messageId)).toEqual({ result: 'rejected', detail: PROPERTY_OBJECT_ERRORS.HOLD_MISMATCH });
    const rows = await t.database.sql`SELECT message_id, hold_deal_id FROM chessboard.hold_mismatches WHERE property_object_id = ${id}`;
    expect(rows).toEqual([{ message_id: messageId, hold_deal_id: before.hold_deal_id }]);
    expect(await readObject(t.database, id)).toEqual(before);
  }, 90_000);
});
