import { contracts, type AnyEnvelope, type Topic } from '../../contracts';
import type { Database } from '../db';
import type { PlatformEnv } from '../env';
import type { Logger } from '../logger';
import { applyInInbox, recordRejection, RejectMessage, type ConsumerDefinition } from './consumer-runner';

export interface ReplayCounts { applied: number; noOp: number; duplicate: number; rejected: number }

/**
 * Runs a consumer over events that never went through Kafka (the demo seed: its bookings are written
 * in their end state, their events are not published) exactly as the runner applies a message: the
 * contract parse, then inbox row and handler in one transaction per event (a messageId seen before is
 * skipped). A rejection is recorded as the runner records it (`rejections: 'record'`), or ends the
 * replay (`'throw'`: a seed whose own events are refused is broken).
 */
export async function replayThroughConsumer(
  database: Database,
  def: ConsumerDefinition,
  events: Iterable<{ topic: Topic; envelope: unknown }>,
  ctx: { logger: Logger; env: PlatformEnv; rejections?: 'record' | 'throw' },
): Promise<ReplayCounts> {
  const counts: ReplayCounts = { applied: 0, noOp: 0, duplicate: 0, rejected: 0 };
  for (const e of events) {
    const envelope = contracts[e.topic].parse(e.envelope) as AnyEnvelope;
    try {
      const outcome = await applyInInbox(database, def, { topic: e.topic, envelope, partition: 0, offset: '0' }, { logger: ctx.logger, env: ctx.env });
      if (outcome.result === 'applied') counts.applied++;
      else if (outcome.result === 'no-op') counts.noOp++;
      else counts.duplicate++;
    } catch (error) {
      if (!(error instanceof RejectMessage) || ctx.rejections === 'throw') throw error;
      await recordRejection(database, def, envelope.messageId, e.topic, error.code, error.record);
      counts.rejected++;
    }
  }
  return counts;
}
