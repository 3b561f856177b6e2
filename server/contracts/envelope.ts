import { z } from 'zod';

/** The JSON envelope of every Kafka message (DESIGN.md). The payload schema is per topic. */
export function envelopeSchema<T extends z.ZodTypeAny>(type: string, payload: T) {
  return z.object({
    messageId: z.uuid(),
    type: z.literal(type),
    contractVersion: z.literal(1),
    aggregateType: z.string().min(1),
    aggregateId: z.uuid(),
    occurredAt: z.iso.datetime({ offset: true }),
    tenantId: z.uuid(),
    correlationId: z.uuid(),
    causationId: z.uuid().nullable(),
    payload,
  });
}

export const anyEnvelopeSchema = z.object({
  messageId: z.uuid(),
  type: z.string(),
  contractVersion: z.number().int(),
  aggregateType: z.string(),
  aggregateId: z.uuid(),
  occurredAt: z.string(),
  tenantId: z.uuid(),
  correlationId: z.uuid(),
  causationId: z.uuid().nullable(),
  payload: z.unknown(),
});
export type AnyEnvelope = z.infer<typeof anyEnvelopeSchema>;

const isoDate = z.iso.datetime({ offset: true });
export const timestamp = isoDate;
export const nullableTimestamp = isoDate.nullable();
