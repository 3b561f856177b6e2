import { randomUUID } from 'node:crypto';
import { eq, getTableColumns, sql } from 'drizzle-orm';
import { z } from 'zod';
import { preparedQuery, preparedWrite, type Tx } from '../../platform/db';
import { pgConstraint, pgErrorCode } from '../../platform/errors';
import { writeOutbox } from '../../platform/outbox/write';
import { createBooking, type BookingRecord } from '../booking';
import { onBookingCreated } from '../deal';
import { crmError } from '../errors';
import { bookingCreatedEvent } from '../events';
import { bookability } from '../property-object-view';
import { bookings, crmPropertyObjects } from '../schema';
import { assertRequisitesUsable, idempotencyKeyInput, requisitesInput } from './input';
import { dealLocked, programInTenant, selectDealForUpdate, selectProgram } from './locking';
import { saveDealStatus } from './persistence';
import { withIdempotency } from './idempotency';
import { writeTimeline } from './timeline';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingOutput } from './output';

export const createBookingInput = z.strictObject({
  dealId: z.uuid(),
  // checked against crm's own view of the objects (crm.property_objects, DESIGN decision 8)
  propertyObjectId: z.uuid(),
  programId: z.uuid(),
  /** the buyer's requisite set (profile): optional here; a paid booking needs it before upload-contract */
  requisites: requisitesInput.optional(),
  idempotencyKey: idempotencyKeyInput.optional(),
});
export type CreateBookingInput = z.infer<typeof createBookingInput>;
/** the booking after the command */
export const createBookingOutput = bookingOutput;

const ACTIVE_OBJECT_INDEX = 'ux_bookings_active_property_object';

/**
 * DESIGN decision 8: crm books only what it may. One statement by primary key whatever the case, and
 * one answer — CRM_PROPERTY_OBJECT_NOT_FOUND with the asked id only — for an unknown id, another
 * tenant's object (the deal's tenant is the developer's) and a deleted one, so neither the body nor the
 * timing tells another tenant's objects from random ids. Sold and Hidden (the tenant's own objects)
 * answer their own conflict. The view may lag chessboard by the saga's latency; chessboard's guard
 * (INV-CHS-001/003) stays the last word.
 */
// built once, run prepared (platform/db.ts)
const objectView = preparedQuery('crm_property_object_view', (db) => db
  .select({ tenantId: crmPropertyObjects.tenantId, status: crmPropertyObjects.status, deleted: crmPropertyObjects.deleted })
  .from(crmPropertyObjects)
  .where(eq(crmPropertyObjects.id, sql.placeholder('id'))));
const selectObjectView = (tx: Tx, propertyObjectId: string) => objectView(tx, { id: propertyObjectId });

/** The booking row, every column from the record (built once, run prepared: platform/db.ts preparedWrite). */
const insertBooking = preparedWrite('crm_booking_insert', bookings, Object.keys(getTableColumns(bookings)) as (keyof BookingRecord)[],
  (db, values) => db.insert(bookings).values(values));

function assertBookable(view: Awaited<ReturnType<typeof selectObjectView>>[number] | undefined, propertyObjectId: string, dealTenantId: string): void {
  const verdict = bookability(view ?? null, dealTenantId);
  switch (verdict.kind) {
    case 'bookable':
      return;
    case 'not-found':
      throw crmError('CRM_PROPERTY_OBJECT_NOT_FOUND', 'No such property object', { propertyObjectId });
    case 'sold':
      throw crmError('CRM_BOOKING_PROPERTY_OBJECT_SOLD', 'This property object is sold', { propertyObjectId });
    case 'hidden':
      throw crmError('CRM_BOOKING_PROPERTY_OBJECT_HIDDEN', 'This property object is withdrawn from sale', { propertyObjectId });
  }
}

/**
 * [*] → Reserved (create-booking). One transaction: the booking, the deal Application → Booking, the
 * timeline row and booking-created. INV-BKG-2 (engaged deal) in the domain; INV-BKG-001 (one active
 * booking per object) by the unique partial index, surfaced as CRM_BOOKING_PROPERTY_OBJECT_BUSY.
 */
export async function createBookingCommand(tx: Tx, input: CreateBookingInput, ctx: CommandContext<Actor>): Promise<BookingRecord> {
  return withIdempotency(tx, ctx, 'booking.create', input, async () => {
    // The three reads need only the input, so they are sent together (one round trip). PostgreSQL runs
    // them in order: the program and the object are read once the deal's lock is held; their
    // checks run in the same order (deal, program, object), so the same error wins.
    const [dealRows, programRows, viewRows] = await Promise.all([
      selectDealForUpdate(tx, ctx, input.dealId),
      selectProgram(tx, input.programId),
      selectObjectView(tx, input.propertyObjectId),
    ]);
    const deal = dealLocked(dealRows, ctx, input.dealId);
    const program = programInTenant(programRows[0], input.programId, deal.tenantId);
    assertBookable(viewRows[0], input.propertyObjectId, deal.tenantId);
    if (input.requisites) await assertRequisitesUsable(tx, ctx.actor, deal.tenantId, input.requisites);
    const transition = createBooking({
      id: randomUUID(),
      deal,
      program,
      propertyObjectId: input.propertyObjectId,
      requisites: input.requisites ?? null,
      createdBy: ctx.actor.userId,
      now: ctx.now,
    });
    const booking = transition.booking;
    const dealChange = onBookingCreated(deal);
    const messageId = randomUUID();
    // The four writes do not depend on each other, so they are sent together: postgres.js pipelines
    // them on the transaction's connection (one round trip and one socket write instead of five —
    // per-statement round trips were the web app's largest CPU cost in `npm run bench -- booking-commands`).
    // The booking INSERT goes first: if INV-BKG-001 refuses it, its error is the one reported (the
    // statements behind it fail as "transaction aborted") and the whole transaction rolls back.
    try {
      await Promise.all([
        insertBooking(tx, booking).then(() => undefined),
        dealChange ? saveDealStatus(tx, deal.id, dealChange, ctx.now) : undefined,
        writeOutbox(tx, 'crm', { ...bookingCreatedEvent(booking, ctx, deal.agentId, deal.investorId), messageId }),
        writeTimeline(tx, ctx, transition, [messageId]),
      ]);
    } catch (e) {
      if (pgErrorCode(e) === '23505' && pgConstraint(e) === ACTIVE_OBJECT_INDEX) {
        throw crmError('CRM_BOOKING_PROPERTY_OBJECT_BUSY', 'This property object already has an active booking', {
          propertyObjectId: input.propertyObjectId,
        });
      }
      throw e;
    }
    return booking;
  });
}
