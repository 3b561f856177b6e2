import { randomUUID } from 'node:crypto';
import { z } from 'zod';

const correlationIdSchema = z.uuid();

/**
 * The correlation id a request, command or repair carries: the given one when it is a uuid (every
 * envelope's correlationId is `z.uuid()`, so anything else would make the outbox row unpublishable),
 * otherwise a fresh one. The one rule for the HTTP header, crm's commandContext, the chessboard
 * commands and ops's repairs.
 */
export function correlationIdOf(candidate: string | null | undefined): string {
  return candidate && correlationIdSchema.safeParse(candidate).success ? candidate : randomUUID();
}
