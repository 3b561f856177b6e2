import { createHash, randomUUID } from 'node:crypto';
import { and, eq, inArray, ne, sql, type SQL } from 'drizzle-orm';
import superjson from 'superjson';
import { z } from 'zod';
import type { Actor } from '../../auth/actor';
import type { DbOrTx, Tx } from '../../platform/db';
import { checkRequisiteReference } from '../../profile/module-api';
import { authorize, crmTenantScope, type CrmCommandName } from '../permissions';
import { crmError } from '../errors';
import { bookingPrograms, bookings, bookingTimeline, deals, idempotencyKeys } from '../schema';
import type { BookingRecord, BookingTransition, ProgramTerms } from '../booking';
import { ACTIVE_STATUSES, expiredError } from '../booking';
import type { DealChange, DealRecord } from '../deal';

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
  return { actor, correlationId: z.uuid().safeParse(correlationId).success ? correlationId : randomUUID(), now: now ?? new Date(), liveClock: now === undefined };
}

/**
 * Ordered history: the transition's time is read under the row lock. A command that waited for the
 * lock of a booking (or its deal) takes its `now` after the waiting, so a cancel queued behind a confirm
 * never closes the booking before it was booked (closedAt ≥ bookedAt, timeline times follow versions).
 */
function clockUnderLock(ctx: CommandContext): void {
  if (ctx.liveClock) ctx.now = new Date(Math.max(Date.now(), ctx.now.getTime()));
}

// ---- input building blocks (strict objects, bounded strings, uuids) --------------------------------

export const idempotencyKeyInput = z.string().trim().min(8).max(128).regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits, . _ : -');
export const expectedVersionInput = z.number().int().positive().max(1_000_000_000);
export const reasonInput = z.string().trim().min(1).max(500);
export const documentInput = z.string().trim().min(1).max(500);

/** Input of every command on one booking. */
export const bookingCommandInput = {
  bookingId: z.uuid(),
  expectedVersion: expectedVersionInput.optional(),
  idempotencyKey: idempotencyKeyInput.optional(),
};

/** The buyer's requisite set of a booking (profile): both or neither. */
export const requisitesInput = z.strictObject({
  setId: z.uuid(),
  version: z.number().int().positive().max(1_000_000),
});

/**
 * The set must exist in the booking's tenant with its fields (asked of profile's module API, which takes
 * the set FOR SHARE until this transaction ends: an erasure cannot slip in). Ids only in the error.
 */
export async function assertRequisitesUsable(tx: Tx, tenantId: string, requisites: z.infer<typeof requisitesInput>): Promise<void> {
  const verdict = await checkRequisiteReference(tx, { tenantId, setId: requisites.setId, version: requisites.version });
  if (verdict === 'not-found') {
    throw crmError('CRM_BOOKING_REQUISITE_SET_NOT_FOUND', 'No such requisite set (or version) in this tenant', { requisiteSetId: requisites.setId, version: requisites.version });
  }
  if (verdict === 'erased') {
    throw crmError('CRM_BOOKING_REQUISITE_SET_ERASED', 'This requisite set was erased', { requisiteSetId: requisites.setId });
  }
}

// ---- tenant filter -------------------------------------------------------------------------------

/** The tenant predicate of a table for this actor; a foreign row looks exactly like a missing one. */
export function tenantFilter(actor: Actor, column: typeof bookings.tenantId | typeof deals.tenantId | typeof bookingPrograms.tenantId): SQL | undefined {
  const scope = crmTenantScope(actor);
  return 'all' in scope ? undefined : eq(column, scope.tenantId);
}

// ---- loading with row locks ------------------------------------------------------------------------
// Lock order is deal → booking wherever both are locked, so two commands never wait on each other in a
// cycle; the expiration job never waits at all (SKIP LOCKED).

function bookingNotFound(bookingId: string): never {
  throw crmError('CRM_BOOKING_NOT_FOUND', 'No such booking', { bookingId });
}

/**
 * A stale expectedVersion. When what changed the booking meanwhile was the expiry worker, the caller
 * lost the race with booking-expiration: answer that domain reason with the missed deadline (the user
 * can do nothing with "changed by someone else, try again" — a retry is refused anyway).
 */
function checkExpectedVersion(booking: BookingRecord, expectedVersion: number | undefined): void {
  if (expectedVersion !== undefined && booking.version !== expectedVersion) {
    if (booking.status === 'ReserveExpired' || booking.status === 'BookingExpired') expiredError(booking);
    throw crmError('CRM_BOOKING_VERSION_CONFLICT', 'The booking has changed since you loaded it', {
      bookingId: booking.id,
      expectedVersion,
      actualVersion: booking.version,
      // what it is now: the UI says "now Booked" rather than "try again" (a retry may make no sense)
      status: booking.status,
    });
  }
}

/** The booking, locked FOR UPDATE for this transaction (a concurrent transition waits, then re-reads). */
export async function lockBooking(tx: Tx, ctx: CommandContext, bookingId: string, expectedVersion?: number): Promise<BookingRecord> {
  const [booking] = await tx
    .select()
    .from(bookings)
    .where(and(eq(bookings.id, bookingId), tenantFilter(ctx.actor, bookings.tenantId)))
    .for('update');
  if (!booking) bookingNotFound(bookingId);
  clockUnderLock(ctx);
  checkExpectedVersion(booking, expectedVersion);
  return booking;
}

/** The booking and its deal, both locked (deal first). */
export async function lockBookingWithDeal(
  tx: Tx,
  ctx: CommandContext,
  bookingId: string,
  expectedVersion?: number,
): Promise<{ booking: BookingRecord; deal: DealRecord }> {
  const [ref] = await tx
    .select({ dealId: bookings.dealId })
    .from(bookings)
    .where(and(eq(bookings.id, bookingId), tenantFilter(ctx.actor, bookings.tenantId)));
  if (!ref) bookingNotFound(bookingId);
  const [deal] = await tx.select().from(deals).where(eq(deals.id, ref.dealId)).for('update');
  const booking = await lockBooking(tx, ctx, bookingId, expectedVersion);
  if (!deal) throw crmError('CRM_DEAL_NOT_FOUND', 'No such deal', { dealId: ref.dealId });
  return { booking, deal };
}

export async function lockDeal(tx: Tx, ctx: CommandContext, dealId: string): Promise<DealRecord> {
  const [deal] = await tx
    .select()
    .from(deals)
    .where(and(eq(deals.id, dealId), tenantFilter(ctx.actor, deals.tenantId)))
    .for('update');
  if (!deal) throw crmError('CRM_DEAL_NOT_FOUND', 'No such deal', { dealId });
  clockUnderLock(ctx);
  return deal;
}

/** The program's terms. Booking programs belong to the developer's tenant: a foreign one is not found. */
export async function loadProgram(db: DbOrTx, programId: string, tenantId: string): Promise<ProgramTerms> {
  const [program] = await db
    .select({
      id: bookingPrograms.id,
      isPaid: bookingPrograms.isPaid,
      reserveDurationMinutes: bookingPrograms.reserveDurationMinutes,
      bookingDurationHours: bookingPrograms.bookingDurationHours,
    })
    .from(bookingPrograms)
    .where(and(eq(bookingPrograms.id, programId), eq(bookingPrograms.tenantId, tenantId)));
  if (!program) throw crmError('CRM_PROGRAM_NOT_FOUND', 'No such booking program', { programId });
  return program;
}

// ---- persisting ------------------------------------------------------------------------------------

/** Writes the booking's next state; optimistic concurrency: the row must still be at the version it was read at. */
export async function saveBooking(tx: Tx, transition: BookingTransition): Promise<void> {
  const b = transition.booking;
  const rows = await tx
    .update(bookings)
    .set({
      status: b.status,
      paymentStatus: b.paymentStatus,
      reserveExpiresAt: b.reserveExpiresAt,
      bookingExpiresAt: b.bookingExpiresAt,
      bookedAt: b.bookedAt,
      contractDocument: b.contractDocument,
      receiptDocument: b.receiptDocument,
      requisiteSetId: b.requisiteSetId,
      requisiteSetVersion: b.requisiteSetVersion,
      closedReason: b.closedReason,
      closedAt: b.closedAt,
      version: b.version,
      updatedAt: b.updatedAt,
    })
    .where(and(eq(bookings.id, b.id), eq(bookings.version, b.version - 1)))
    .returning({ id: bookings.id });
  if (rows.length !== 1) {
    throw crmError('CRM_BOOKING_VERSION_CONFLICT', 'The booking has changed meanwhile', { bookingId: b.id, expectedVersion: b.version - 1 });
  }
}

export async function saveDealStatus(tx: Tx, dealId: string, change: DealChange, now: Date): Promise<void> {
  await tx
    .update(deals)
    .set({ status: change.to, version: sql`${deals.version} + 1`, updatedAt: now })
    .where(and(eq(deals.id, dealId), eq(deals.status, change.from)));
}

/** Active bookings of the deal other than `exceptBookingId` (the deal row is locked by the caller). */
export async function otherActiveBookings(tx: Tx, dealId: string, exceptBookingId: string): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(bookings)
    .where(and(eq(bookings.dealId, dealId), ne(bookings.id, exceptBookingId), inArray(bookings.status, [...ACTIVE_STATUSES])));
  return row?.n ?? 0;
}

/** One crm.booking_timeline row per transition: actor, from → to, reason, the message ids it published. */
export async function writeTimeline(
  tx: Tx,
  ctx: Pick<CommandContext, 'actor' | 'correlationId' | 'now'>,
  transition: BookingTransition,
  messageIds: string[],
  reason: string | null = null,
  action: string = transition.action,
): Promise<void> {
  await tx.insert(bookingTimeline).values({
    bookingId: transition.booking.id,
    tenantId: transition.booking.tenantId,
    at: ctx.now,
    actorType: ctx.actor.role === 'system' ? 'system' : 'user',
    actorId: ctx.actor.userId,
    action,
    fromStatus: transition.from,
    toStatus: transition.to,
    reason,
    correlationId: ctx.correlationId,
    messageIds,
    bookingVersion: transition.booking.version,
  });
}

// ---- client idempotency keys ------------------------------------------------------------------------

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
  ctx: CommandContext,
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
