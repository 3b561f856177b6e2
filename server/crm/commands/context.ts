import type { Actor } from '../../auth/actor';
import { correlationIdOf } from '../../platform/correlation-id';

/** What every crm command gets besides its input: who, which request, and the clock (tests pass `now`). */
export interface CommandContext {
  actor: Actor;
  /** flows into outbox rows and timeline rows; must be a uuid (the envelope requires it) */
  correlationId: string;
  now: Date;
  /**
   * true when `now` is the wall clock (not a test's fixed instant): the lock helpers then take `now`
   * again once they hold the row lock, so a transition's time is never earlier than the one it waited for
   */
  liveClock?: boolean;
  /** set by `withIdempotency` when the result is a stored replay (the router then skips metrics) */
  replayed?: boolean;
}

export function commandContext(actor: Actor, correlationId: string, now?: Date): CommandContext {
  return { actor, correlationId: correlationIdOf(correlationId), now: now ?? new Date(), liveClock: now === undefined };
}

/**
 * Ordered history: the transition's time is read under the row lock. A command that waited for the
 * lock of a booking (or its deal) takes its `now` after the waiting, so a cancel queued behind a confirm
 * never closes the booking before it was booked (closedAt ≥ bookedAt, timeline times follow versions).
 */
export function clockUnderLock(ctx: CommandContext): void {
  if (ctx.liveClock) ctx.now = new Date(Math.max(Date.now(), ctx.now.getTime()));
}
