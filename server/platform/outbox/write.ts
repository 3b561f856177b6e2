import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { sql } from 'drizzle-orm';
import { contracts, eventTypes, type Topic } from '../../contracts';
import type { z } from 'zod';
import type { Tx } from '../db';
import { traceHeaders } from '../tracing';
import { crmOutbox } from '../../crm/schema';
import { chessboardOutbox } from '../../chessboard/schema';

export const OUTBOXES = { crm: crmOutbox, chessboard: chessboardOutbox } as const;
export type OutboxName = keyof typeof OUTBOXES;
export const outboxChannel = (name: OutboxName) => `pin_outbox_${name}`;

export interface OutboxEvent<T extends Topic> {
  topic: T;
  aggregateType: string;
  aggregateId: string;
  tenantId: string;
  payload: z.infer<(typeof contracts)[T]>['payload'];
  correlationId: string;
  causationId?: string | null;
  occurredAt?: Date;
  messageId?: string;
}

/**
 * Inserts one event into the context's outbox inside the caller's transaction, so the state change
 * and its event commit together. The envelope is validated with the topic's shared zod contract
 * (a producer bug fails the command instead of poisoning consumers). NOTIFY is delivered at commit.
 */
export async function writeOutbox<T extends Topic>(tx: Tx, outbox: OutboxName, event: OutboxEvent<T>): Promise<string> {
  const messageId = event.messageId ?? randomUUID();
  const envelope = contracts[event.topic].parse({
    messageId,
    type: eventTypes[event.topic],
    contractVersion: 1,
    aggregateType: event.aggregateType,
    aggregateId: event.aggregateId,
    occurredAt: (event.occurredAt ?? new Date()).toISOString(),
    tenantId: event.tenantId,
    correlationId: event.correlationId,
    causationId: event.causationId ?? null,
    payload: event.payload,
  });
  await tx.insert(OUTBOXES[outbox]).values({
    messageId,
    topic: event.topic,
    key: event.aggregateId,
    aggregateType: event.aggregateType,
    aggregateId: event.aggregateId,
    payload: envelope,
    // traceparent of the writing span (command, job cycle or consumer): the relay copies the headers
    // onto the Kafka message and the consumer continues the trace from it (tracing.ts)
    headers: { correlationId: event.correlationId, causationId: event.causationId ?? null, contractVersion: '1', ...traceHeaders() },
  });
  // per item on the writer's span (a job cycle writes many): which event, for which tenant, in which run/request
  trace.getActiveSpan()?.addEvent('outbox.write', {
    'pin.outbox': outbox, 'messaging.destination.name': event.topic, 'messaging.message.id': messageId,
    'pin.tenant_id': event.tenantId, 'pin.correlation_id': event.correlationId,
  });
  await tx.execute(sql`SELECT pg_notify(${outboxChannel(outbox)}, '')`);
  return messageId;
}
