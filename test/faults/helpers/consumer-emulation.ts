import { sql as dsql } from 'drizzle-orm';
import { handleCrmPropertyObjectStatus } from '../../../server/chessboard/crm-property-object-status.consumer';
import { contracts, type Topic } from '../../../server/contracts';
import type { Database } from '../../../server/platform/db';
import { RejectMessage } from '../../../server/platform/kafka/consumer-runner';
import { CONSUMER_GROUPS } from '../../../server/contracts/consumer-groups';
import { TOPICS } from '../../../server/platform/kafka/topics';
import type { Logger } from '../../../server/platform/logger';

/**
 * The chessboard consumer applied in-process, exactly as server/platform/kafka/consumer-runner.ts
 * does it for one Kafka message: inbox row + handler in ONE transaction (a duplicate messageId is a
 * no-op), a non-'applied' result or a detail stored on the inbox row, and a RejectMessage recorded as
 * 'rejected' with its ops record in a second transaction (the runner also sends it to the DLQ).
 * `bypassInbox` models a redelivery whose inbox row is gone (at-least-once without the dedup).
 */

export const CRM_STATUS_CONSUMER = CONSUMER_GROUPS.crmPropertyObjectStatus;
export const CRM_STATUS_TOPICS = new Set<string>([
  TOPICS.bookingCreated, TOPICS.bookingConfirmed, TOPICS.bookingExtended, TOPICS.bookingExpired,
  TOPICS.bookingCancelled, TOPICS.dealCancelled, TOPICS.dealSaleStarted,
]);

export interface OutboxRow { message_id: string; topic: string; payload: unknown }
export interface DeliveryResult { outcome: 'applied' | 'no-op' | 'duplicate' | 'rejected'; code?: string; detail?: string }

export async function deliverCrmEvent(
  database: Database,
  row: OutboxRow,
  opts: { now: Date; logger: Logger; bypassInbox?: boolean },
): Promise<DeliveryResult> {
  const { db } = database;
  const envelope = contracts[row.topic as Topic].parse(row.payload);
  try {
    return await db.transaction(async (tx): Promise<DeliveryResult> => {
      if (!opts.bypassInbox) {
        const inserted = await tx.execute(dsql`INSERT INTO chessboard.inbox (consumer, message_id, topic, result)
          VALUES (${CRM_STATUS_CONSUMER}, ${row.message_id}, ${row.topic}, 'applied') ON CONFLICT DO NOTHING RETURNING message_id`);
        if (inserted.length === 0) return { outcome: 'duplicate' };
      }
      const res = await handleCrmPropertyObjectStatus(tx, { topic: row.topic as Topic, envelope, partition: 0, offset: '0' }, { logger: opts.logger, now: opts.now });
      if (!opts.bypassInbox && (res.result !== 'applied' || res.detail)) {
        await tx.execute(dsql`UPDATE chessboard.inbox SET result = ${res.result}, detail = ${res.detail ?? null}
          WHERE consumer = ${CRM_STATUS_CONSUMER} AND message_id = ${row.message_id}`);
      }
      return { outcome: res.result, detail: res.detail };
    });
  } catch (e) {
    if (!(e instanceof RejectMessage)) throw e;
    await db.transaction(async (tx) => {
      await tx.execute(dsql`INSERT INTO chessboard.inbox (consumer, message_id, topic, result, detail)
        VALUES (${CRM_STATUS_CONSUMER}, ${row.message_id}, ${row.topic}, 'rejected', ${e.code}) ON CONFLICT DO NOTHING`);
      await e.record?.(tx);
    });
    return { outcome: 'rejected', code: e.code, detail: e.message };
  }
}

/**
 * The ops DLQ requeue as the cross-deal scenarios model it (the DLQ page: the inbox row dropped, the
 * message delivered again): the refused messages are requeued in crm's order — `events`' order, not
 * the delivery order that refused them — pass after pass, until a pass leaves no fewer refused than it
 * found. A confirm that overtook its own booking's create (INV-CHS-003) goes through once the create
 * is in. Returns the ones still refused.
 * @param requeue drops the row's inbox entry and delivers it again
 * @param stillRejected which of a pass's rows are refused after it
 */
export async function requeueUntilSettled<R>(
  events: readonly R[],
  rejected: readonly R[],
  requeue: (row: R) => Promise<void>,
  stillRejected: (pass: R[]) => Promise<R[]>,
): Promise<R[]> {
  let refused = [...rejected];
  for (let progress = true; progress && refused.length > 0;) {
    const pass = events.filter((e) => refused.includes(e));
    for (const row of pass) await requeue(row);
    const still = await stillRejected(pass);
    progress = still.length < refused.length;
    refused = still;
  }
  return refused;
}
