import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { INBOX_REPLAY } from './dlq';
import { consumerGroups } from './kafka-admin';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

describe('DLQ requeue: inbox replay through the inbox owner', () => {
  // every consumer group's inbox, so a new consumer's context cannot be left without a replay command
  for (const { group, inbox } of consumerGroups()) {
    it(`${group}: ${inbox}'s command forgets only that consumer's rejected record of the message`, async () => {
      const rejected = randomUUID();
      const applied = randomUUID();
      const table = t.database.sql(`${inbox}.inbox`);
      await t.database.sql`INSERT INTO ${table} (consumer, message_id, topic, result) VALUES
        (${group}, ${rejected}, 't', 'rejected'), (${group}, ${applied}, 't', 'applied'), (${'other.group'}, ${rejected}, 't', 'rejected')`;

      await t.database.db.transaction(async (tx) => {
        await INBOX_REPLAY[inbox](tx, { consumer: group, messageId: rejected });
        await INBOX_REPLAY[inbox](tx, { consumer: group, messageId: applied }); // applied stays deduplicated
      });

      const rows = await t.database.sql<{ consumer: string; message_id: string; result: string }[]>`
        SELECT consumer, message_id, result FROM ${table} WHERE message_id IN (${rejected}, ${applied}) ORDER BY consumer, result`;
      // compared as sets: a group named after 'other.group' sorts behind it
      const sorted = (xs: string[][]) => xs.map((x) => x.join(' ')).sort();
      expect(sorted(rows.map((r) => [r.consumer, r.message_id, r.result]))).toEqual(sorted([
        [group, applied, 'applied'],
        ['other.group', rejected, 'rejected'],
      ]));
    });
  }
});
