import { sql } from 'drizzle-orm';
import type { AnyEnvelope } from '../contracts/envelope';
import { contracts } from '../contracts';
import type { Database } from '../platform/db';
import type { Logger } from '../platform/logger';
import { RejectMessage } from '../platform/kafka/consumer-runner';
import type { MessengerTopic } from './card';
import { dealChatConsumer, handleDealChatEvent } from './deal-chat.consumer';

/**
 * Runs the deal chat consumer's handler over crm events that never went through Kafka (the demo seed:
 * its bookings are written in their end state, their events are not published), exactly as the runner
 * applies a message: the contract parse, the inbox row (a messageId seen before is skipped) and the
 * handler in one transaction per event. A rejected event is recorded as rejected, as the runner does.
 */
export async function replayIntoDealChats(
  database: Database,
  events: readonly { topic: MessengerTopic; envelope: unknown }[],
  logger: Logger,
): Promise<{ applied: number; noOp: number; duplicate: number; rejected: number }> {
  const counts = { applied: 0, noOp: 0, duplicate: 0, rejected: 0 };
  for (const e of events) {
    const envelope = contracts[e.topic].parse(e.envelope) as AnyEnvelope;
    try {
      const result = await database.db.transaction(async (tx) => {
        const inserted = await tx.execute(sql`INSERT INTO messenger.inbox (consumer, message_id, topic, result)
          VALUES (${dealChatConsumer.name}, ${envelope.messageId}, ${e.topic}, 'applied') ON CONFLICT DO NOTHING RETURNING message_id`);
        if (inserted.length === 0) return 'duplicate' as const;
        const outcome = await handleDealChatEvent(tx, { topic: e.topic, envelope, partition: 0, offset: '0' }, { logger });
        if (outcome.result !== 'applied' || outcome.detail) {
          await tx.execute(sql`UPDATE messenger.inbox SET result = ${outcome.result}, detail = ${outcome.detail ?? null}
            WHERE consumer = ${dealChatConsumer.name} AND message_id = ${envelope.messageId}`);
        }
        return outcome.result;
      });
      if (result === 'applied') counts.applied++;
      else if (result === 'no-op') counts.noOp++;
      else counts.duplicate++;
    } catch (error) {
      if (!(error instanceof RejectMessage)) throw error;
      await database.db.execute(sql`INSERT INTO messenger.inbox (consumer, message_id, topic, result, detail)
        VALUES (${dealChatConsumer.name}, ${envelope.messageId}, ${e.topic}, 'rejected', ${error.code}) ON CONFLICT DO NOTHING`);
      counts.rejected++;
    }
  }
  return counts;
}
