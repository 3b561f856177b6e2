import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TOPICS } from '../../server/platform/kafka/topics';
import { OutboxRelay } from '../../server/platform/outbox/relay';
import { writeOutbox } from '../../server/platform/outbox/write';
import { createTestContext, type TestContext } from '../harness/harness';

/**
 * Regression of the bug the broker outage scenario found (1 of 200 bookings had its two extensions
 * consumed in the wrong order after a 60 s outage): while the broker was down each relay cycle failed a
 * batch and put it on a backoff of its own; when the broker came back the relay published whatever was
 * due — newer rows that had never failed before older ones still backing off — so an aggregate's newer
 * event reached Kafka before its older one (DESIGN decision 4: rows in id order, order per key).
 * Fix: a row is not published while an older row of the same aggregate (key) is still backing off;
 * other aggregates go on.
 */

let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

const tenantId = randomUUID();
const created = (bookingId: string, version: number) => ({
  bookingId, dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId, bookingVersion: version, programId: randomUUID(),
  status: 'Reserved' as const, reserveExpiresAt: new Date(Date.now() + 3600_000).toISOString(), createdAt: new Date().toISOString(),
});

it('rows written during an outage are not published before the older rows that failed and are still backing off', async () => {
  const sent: { key: string; version: number }[] = [];
  let brokerUp = false;
  const producer = {
    sendBatch: async ({ topicMessages }: { topicMessages: { messages: { key: string; value: string }[] }[] }) => {
      if (!brokerUp) throw new Error('KafkaJSConnectionError: connect ECONNREFUSED');
      for (const tm of topicMessages) for (const m of tm.messages) sent.push({ key: m.key, version: JSON.parse(m.value).payload.bookingVersion });
      return [];
    },
  } as unknown as Producer;
  const relay = new OutboxRelay('crm', { database: t.database, env: t.env, logger: t.logger, producer });
  const write = (key: string, v: number) => t.database.db.transaction((tx) =>
    writeOutbox(tx, 'crm', { topic: TOPICS.bookingCreated, aggregateType: 'Booking', aggregateId: key, tenantId, correlationId: randomUUID(), payload: created(key, v) }));
  try {
    const k = randomUUID();
    const other = randomUUID();
    await write(k, 1);
    await write(other, 1);
    await write(k, 2);
    const failed = await relay.drain(); // the broker is down: the batch fails and backs off
    expect(failed.failed).toBe(3);
    await write(k, 3); // written during the outage, never tried yet
    const fresh = randomUUID();
    await write(fresh, 1); // an aggregate that never failed

    brokerUp = true;
    const early = await relay.drain(); // the broker is back, the failed rows' retry is not due yet
    expect(sent).toEqual([{ key: fresh, version: 1 }]); // k's version 3 waits for k's older rows
    expect(early.published).toBe(1);

    await t.database.sql`UPDATE crm.outbox SET next_attempt_at = now() - interval '1 second' WHERE next_attempt_at IS NOT NULL`;
    const due = await relay.drain();
    expect(due.published).toBe(4);
    expect(sent.slice(1)).toEqual([{ key: k, version: 1 }, { key: other, version: 1 }, { key: k, version: 2 }, { key: k, version: 3 }]);
  } finally {
    await relay.release();
  }
});
