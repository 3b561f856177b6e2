import { createHash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import superjson from 'superjson';
import type { Tx } from '../../platform/db';
import { authorize, type CrmCommandName } from '../permissions';
import { crmError } from '../errors';
import { idempotencyKeys } from '../schema';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

/** Client idempotency keys of the crm commands (crm.idempotency_keys). */

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function requestHash(command: string, input: Record<string, unknown>): string {
  const { idempotencyKey: _key, ...rest } = input;
  return createHash('sha256').update(JSON.stringify([command, canonical(rest)])).digest('hex');
}

/**
 * Runs `execute` at most once per client idempotency key (crm.idempotency_keys). A repeated call with
 * the same key and the same input returns the first result and writes nothing; the same key with a
 * different input (or command, or caller) is CRM_IDEMPOTENCY_KEY_REUSED. Concurrent calls with one key
 * are serialised by a transaction-scoped advisory lock, so the second sees the first's stored result.
 * A failed first call stores nothing (its transaction rolled back), so a retry runs again.
 */
export async function withIdempotency<T>(
  tx: Tx,
  ctx: CommandContext<Actor>,
  command: CrmCommandName,
  input: { idempotencyKey?: string } & Record<string, unknown>,
  execute: () => Promise<T>,
): Promise<T> {
  authorize(ctx.actor, command);
  const key = input.idempotencyKey;
  if (!key) return execute();
  const hash = requestHash(command, input);
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`crm:idempotency:${key}`}))`);
  const [stored] = await tx.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key));
  if (stored) {
    if (stored.command !== command || stored.requestHash !== hash || stored.actorId !== ctx.actor.userId) {
      throw crmError('CRM_IDEMPOTENCY_KEY_REUSED', 'This idempotency key was already used for a different request', { command });
    }
    ctx.replayed = true;
    return superjson.deserialize(stored.response as Parameters<typeof superjson.deserialize>[0]) as T;
  }
  const result = await execute();
  await tx.insert(idempotencyKeys).values({
    key,
    actorId: ctx.actor.userId,
    command,
    requestHash: hash,
    response: superjson.serialize(result),
    createdAt: ctx.now,
  });
  return result;
}
