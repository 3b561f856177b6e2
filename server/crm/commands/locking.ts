import { and, eq, sql } from 'drizzle-orm';
import { preparedQuery, type DbOrTx, type Tx } from '../../platform/db';
import { crmError } from '../errors';
import { crmTenantScope } from '../permissions';
import { bookingPrograms, bookings, deals } from '../schema';
import type { BookingRecord, ProgramTerms } from '../booking';
import { expiredError } from '../booking';
import type { DealRecord } from '../deal';
import { tenantFilter } from './tenant-scope';
import type { Actor } from '../../auth/actor';
import { clockUnderLock, type CommandContext } from '../../platform/command-context';

// Loading with row locks.
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
export async function lockBooking(tx: Tx, ctx: CommandContext<Actor>, bookingId: string, expectedVersion?: number): Promise<BookingRecord> {
  return bookingLocked(await selectBookingForUpdate(tx, ctx, bookingId), ctx, bookingId, expectedVersion);
}

// The reads below are built once and run prepared (platform/db.ts preparedQuery): one round trip each,
// pipelined with what is sent beside them. The tenant predicate (tenant-scope.ts) is a second shape.
const bookingForUpdate = {
  anyTenant: preparedQuery('crm_booking_for_update', (db) => db.select().from(bookings).where(eq(bookings.id, sql.placeholder('id'))).for('update')),
  inTenant: preparedQuery('crm_booking_for_update_in_tenant', (db) => db.select().from(bookings)
    .where(and(eq(bookings.id, sql.placeholder('id')), eq(bookings.tenantId, sql.placeholder('tenantId')))).for('update')),
  // an investor: the booking of one of its deals (the deal's investor_id, not the booking's tenant)
  ofInvestor: preparedQuery('crm_booking_for_update_of_investor', (db) => db.select().from(bookings)
    .where(and(eq(bookings.id, sql.placeholder('id')),
      sql`${bookings.dealId} IN (SELECT ${deals.id} FROM ${deals} WHERE ${deals.investorId} = ${sql.placeholder('investorId')})`)).for('update')),
};
const selectBookingForUpdate = (tx: Tx, ctx: CommandContext<Actor>, bookingId: string) => {
  const scope = crmTenantScope(ctx.actor);
  if ('all' in scope) return bookingForUpdate.anyTenant(tx, { id: bookingId });
  if ('investorId' in scope) return bookingForUpdate.ofInvestor(tx, { id: bookingId, investorId: scope.investorId });
  return bookingForUpdate.inTenant(tx, { id: bookingId, tenantId: scope.tenantId });
};

function bookingLocked(rows: BookingRecord[], ctx: CommandContext<Actor>, bookingId: string, expectedVersion: number | undefined): BookingRecord {
  const booking = rows[0];
  if (!booking) bookingNotFound(bookingId);
  clockUnderLock(ctx);
  checkExpectedVersion(booking, expectedVersion);
  return booking;
}

/**
 * The booking, locked, and its program's terms, read in one round trip: the program is found through
 * the booking's (immutable) program_id, so the two statements are sent together. PostgreSQL runs them
 * in order, so the program is read after the lock is held, as when it was read after the booking came back.
 */
export async function lockBookingWithProgram(
  tx: Tx,
  ctx: CommandContext<Actor>,
  bookingId: string,
  expectedVersion?: number,
): Promise<{ booking: BookingRecord; program: ProgramTerms }> {
  const [bookingRows, programRows] = await Promise.all([selectBookingForUpdate(tx, ctx, bookingId), programOfBooking(tx, { bookingId })]);
  const booking = bookingLocked(bookingRows, ctx, bookingId, expectedVersion);
  return { booking, program: programInTenant(programRows[0], booking.programId, booking.tenantId) };
}

/** The booking and its deal, both locked (deal first). */
export async function lockBookingWithDeal(
  tx: Tx,
  ctx: CommandContext<Actor>,
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

export async function lockDeal(tx: Tx, ctx: CommandContext<Actor>, dealId: string): Promise<DealRecord> {
  return dealLocked(await selectDealForUpdate(tx, ctx, dealId), ctx, dealId);
}

const dealForUpdate = {
  anyTenant: preparedQuery('crm_deal_for_update', (db) => db.select().from(deals).where(eq(deals.id, sql.placeholder('id'))).for('update')),
  inTenant: preparedQuery('crm_deal_for_update_in_tenant', (db) => db.select().from(deals)
    .where(and(eq(deals.id, sql.placeholder('id')), eq(deals.tenantId, sql.placeholder('tenantId')))).for('update')),
  ofInvestor: preparedQuery('crm_deal_for_update_of_investor', (db) => db.select().from(deals)
    .where(and(eq(deals.id, sql.placeholder('id')), eq(deals.investorId, sql.placeholder('investorId')))).for('update')),
};
/**
 * The deal's row, locked FOR UPDATE, in the actor's scope (no check: see dealLocked). Another
 * investor's deal is not selected, so it is never locked and answers like a random id.
 */
export const selectDealForUpdate = (tx: Tx, ctx: CommandContext<Actor>, dealId: string) => {
  const scope = crmTenantScope(ctx.actor);
  if ('all' in scope) return dealForUpdate.anyTenant(tx, { id: dealId });
  if ('investorId' in scope) return dealForUpdate.ofInvestor(tx, { id: dealId, investorId: scope.investorId });
  return dealForUpdate.inTenant(tx, { id: dealId, tenantId: scope.tenantId });
};

/** The locked deal of selectDealForUpdate's rows, or CRM_DEAL_NOT_FOUND; the clock is taken under the lock. */
export function dealLocked(rows: DealRecord[], ctx: CommandContext<Actor>, dealId: string): DealRecord {
  const deal = rows[0];
  if (!deal) throw crmError('CRM_DEAL_NOT_FOUND', 'No such deal', { dealId });
  clockUnderLock(ctx);
  return deal;
}

/** The program's terms. Booking programs belong to the developer's tenant: a foreign one is not found. */
export async function loadProgram(db: DbOrTx, programId: string, tenantId: string): Promise<ProgramTerms> {
  return programInTenant((await selectProgram(db, programId))[0], programId, tenantId);
}

const programColumns = {
  id: bookingPrograms.id,
  tenantId: bookingPrograms.tenantId,
  isPaid: bookingPrograms.isPaid,
  reserveDurationMinutes: bookingPrograms.reserveDurationMinutes,
  bookingDurationHours: bookingPrograms.bookingDurationHours,
  maxExtensions: bookingPrograms.maxExtensions,
};
type ProgramRow = ProgramTerms & { tenantId: string };

/**
 * The program by id, whatever its tenant (programInTenant checks it): the statement needs no other
 * row's data, so a command can send it together with its lock.
 */
const programById = preparedQuery('crm_program', (db) => db.select(programColumns).from(bookingPrograms).where(eq(bookingPrograms.id, sql.placeholder('id'))));
export const selectProgram = (db: DbOrTx, programId: string) => programById(db, { id: programId });

/** The program of a booking, through its (immutable) program_id: needs no row the caller has read. */
const programOfBooking = preparedQuery('crm_program_of_booking', (db) => db.select(programColumns).from(bookingPrograms)
  .where(eq(bookingPrograms.id, sql`(SELECT ${bookings.programId} FROM ${bookings} WHERE ${bookings.id} = ${sql.placeholder('bookingId')})`)));

/** The program's terms if it is the tenant's; a foreign program is not found, like a missing one. */
export function programInTenant(row: ProgramRow | undefined, programId: string, tenantId: string): ProgramTerms {
  if (!row || row.tenantId !== tenantId) throw crmError('CRM_PROGRAM_NOT_FOUND', 'No such booking program', { programId });
  return {
    id: row.id, isPaid: row.isPaid, reserveDurationMinutes: row.reserveDurationMinutes, bookingDurationHours: row.bookingDurationHours,
    maxExtensions: row.maxExtensions,
  };
}
