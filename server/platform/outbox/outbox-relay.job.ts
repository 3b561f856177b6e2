import type { Producer } from 'kafkajs';
import { createIdempotentProducer } from '../kafka/client';
import type { JobContext, JobDefinition, JobSummary } from '../jobs/types';
import { OutboxRelay } from './relay';
import type { OutboxName } from './write';

/**
 * Job `outbox-relay`: one cycle drains every outbox the composition root lists. The worker also runs a cycle
 * on every NOTIFY from a writing transaction; the cron tick catches a lost notification.
 * The producer and the relays' lock connections live across cycles (closed by `close`).
 */
export function createOutboxRelayJob(outboxes: readonly OutboxName[]): JobDefinition & { relays(): OutboxRelay[] } {
  let producer: Producer | undefined;
  let connected: Promise<void> | undefined;
  const relays = new Map<OutboxName, OutboxRelay>();

  return {
    name: 'outbox-relay',
    schedule: (env) => ({ cron: env.OUTBOX_RELAY_SCHEDULE, timezone: 'UTC' }),
    relays: () => [...relays.values()],
    isIdle: (s) => s.Published === 0 && s.Failed === 0,
    async run(ctx: JobContext): Promise<JobSummary> {
      if (!producer) {
        producer = createIdempotentProducer(ctx.kafka);
        connected = producer.connect();
      }
      try {
        await connected;
      } catch (e) {
        producer = undefined;
        throw e;
      }
      const summary: JobSummary = { Published: 0, Failed: 0, Batches: 0, Pruned: 0, Outboxes: {} as Record<string, unknown> };
      for (const name of outboxes) {
        let relay = relays.get(name);
        if (!relay) {
          relay = new OutboxRelay(name, { database: ctx.database, env: ctx.env, logger: ctx.logger, producer: producer! });
          relays.set(name, relay);
        }
        // outboxes are independent: a broken one must not starve the other
        const s = await relay.drain(ctx.signal);
        (summary.Outboxes as Record<string, unknown>)[name] = s;
        summary.Published = (summary.Published as number) + s.published;
        summary.Failed = (summary.Failed as number) + s.failed;
        summary.Batches = (summary.Batches as number) + s.batches;
        summary.Pruned = (summary.Pruned as number) + s.pruned;
      }
      if ((summary.Failed as number) > 0) {
        const err = new Error(`outbox relay: ${summary.Failed} rows failed to publish`);
        (err as Error & { summary: JobSummary }).summary = summary;
        throw err;
      }
      return summary;
    },
    async close() {
      for (const relay of relays.values()) await relay.release();
      relays.clear();
      await producer?.disconnect().catch(() => {});
      producer = undefined;
    },
  };
}
