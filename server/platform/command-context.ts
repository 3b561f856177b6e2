import { correlationIdOf } from './correlation-id';

/**
 * Who acts, as far as platform can say: the contexts act for auth's Actor, which platform may not name
 * (it is the floor below auth), so the command context takes the actor's type as a parameter.
 */
export interface CommandActor {
  userId: string;
}

/**
 * What every command of every context gets besides its input: who, which request, and the clock (tests
 * pass `now`). The tRPC command procedure builds one per request; jobs, consumers, the seed and repairs
 * build theirs with commandContext, and a repair passes its context on to the commands it composes.
 */
export interface CommandContext<TActor extends CommandActor = CommandActor> {
  actor: TActor;
  /** flows into outbox rows and timeline rows; a uuid (the envelope requires it): see correlationIdOf */
  correlationId: string;
  now: Date;
  /**
   * true when `now` is the wall clock (not a test's fixed instant): the lock helpers then take `now`
   * again once they hold the row lock, so a transition's time is never earlier than the one it waited for
   */
  liveClock?: boolean;
  /** set by an idempotent command when its result is a stored replay (the procedure then records no metrics) */
  replayed?: boolean;
}

export function commandContext<TActor extends CommandActor>(actor: TActor, correlationId?: string | null, now?: Date): CommandContext<TActor> {
  return { actor, correlationId: correlationIdOf(correlationId), now: now ?? new Date(), liveClock: now === undefined };
}

/**
 * Ordered history: the transition's time is read under the row lock. A command that waited for the
 * lock of a row takes its `now` after the waiting, so a cancel queued behind a confirm never closes the
 * booking before it was booked (closedAt ≥ bookedAt, timeline times follow versions).
 */
export function clockUnderLock(ctx: CommandContext): void {
  if (ctx.liveClock) ctx.now = new Date(Math.max(Date.now(), ctx.now.getTime()));
}
