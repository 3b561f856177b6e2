import type { Actor } from '../auth/actor';
import { propertyObjectIdsMatching } from '../chessboard/queries';
import type { Tx } from '../platform/db';
import type { BookingRecord } from './booking';
import type { Context } from '../trpc/context';
import { authedProcedure, roleProcedure, router } from '../trpc/init';
import { cancelBookingCommand, cancelBookingInput } from './commands/cancel-booking';
import { cancelDealCommand, cancelDealInput, type CancelDealResult } from './commands/cancel-deal';
import { confirmBookingCommand, confirmBookingInput } from './commands/confirm-booking';
import { confirmPaymentCommand, confirmPaymentInput } from './commands/confirm-payment';
import { createBookingCommand, createBookingInput } from './commands/create-booking';
import { extendBookingCommand, extendBookingInput } from './commands/extend-booking';
import { commandContext, type CommandContext } from './commands/context';
import { startSaleCommand, startSaleInput } from './commands/start-sale';
import { uploadContractCommand, uploadContractInput } from './commands/upload-contract';
import { uploadReceiptCommand, uploadReceiptInput } from './commands/upload-receipt';
import { recordCommandFailure, recordCommandSuccess } from './metrics';
import { commandRoles, type CrmCommandName } from './permissions';
import {
  bookingById, bookingByIdInput, dealById, dealByIdInput, listBookings, listBookingsInput, listDeals, listDealsInput, listPrograms,
  listProgramsInput,
} from './queries';

/**
 * Runs one crm command in one transaction (aggregate + timeline + outbox commit together), then
 * records its metrics and a log line — only after the commit, and not for an idempotent replay.
 */
async function runCommand<I, O>(
  ctx: Context & { actor: Actor },
  name: CrmCommandName,
  command: (tx: Tx, input: I, cctx: CommandContext) => Promise<O>,
  input: I,
): Promise<O> {
  const cctx = commandContext(ctx.actor, ctx.correlationId);
  try {
    const result = await ctx.database.db.transaction((tx) => command(tx, input, cctx));
    if (!cctx.replayed) recordCommandSuccess(name, cctx, result);
    ctx.logger.info({ command: name, ...logFields(result), replayed: cctx.replayed ?? false, correlationId: cctx.correlationId }, 'crm command applied');
    return result;
  } catch (e) {
    recordCommandFailure(name, e);
    throw e;
  }
}

/** ids and statuses only (no names, no documents) */
function logFields(result: unknown): Record<string, unknown> {
  if (result && typeof result === 'object' && 'cancelledBookings' in result) {
    const r = result as CancelDealResult;
    return { dealId: r.deal.id, status: r.deal.status, cancelledBookingIds: r.cancelledBookings.map((b) => b.id) };
  }
  const b = result as BookingRecord;
  return { bookingId: b.id, dealId: b.dealId, status: b.status, version: b.version };
}

const commandProcedure = (name: CrmCommandName) => roleProcedure(...commandRoles(name));

// One procedure a command, spelled out: a loop over a command table would give tRPC's client one
// inferred input type for all of them (the `duplicates` tool sees the repetition; it is deliberate).
export const bookingRouter = router({
  create: commandProcedure('booking.create')
    .input(createBookingInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'booking.create', createBookingCommand, input)),
  uploadContract: commandProcedure('booking.uploadContract')
    .input(uploadContractInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'booking.uploadContract', uploadContractCommand, input)),
  uploadReceipt: commandProcedure('booking.uploadReceipt')
    .input(uploadReceiptInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'booking.uploadReceipt', uploadReceiptCommand, input)),
  confirm: commandProcedure('booking.confirm')
    .input(confirmBookingInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'booking.confirm', confirmBookingCommand, input)),
  confirmPayment: commandProcedure('booking.confirmPayment')
    .input(confirmPaymentInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'booking.confirmPayment', confirmPaymentCommand, input)),
  extend: commandProcedure('booking.extend')
    .input(extendBookingInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'booking.extend', extendBookingCommand, input)),
  cancel: commandProcedure('booking.cancel')
    .input(cancelBookingInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'booking.cancel', cancelBookingCommand, input)),
  startSale: commandProcedure('booking.startSale')
    .input(startSaleInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'booking.startSale', startSaleCommand, input)),

  byId: authedProcedure.input(bookingByIdInput).query(({ ctx, input }) => bookingById(ctx.database.db, ctx.actor, input)),
  // the project filter and the object-number search are answered by the chessboard (its objects, in
  // the actor's tenant scope); crm filters its bookings by the ids it gets back
  list: authedProcedure.input(listBookingsInput).query(async ({ ctx, input }) => {
    const { db } = ctx.database;
    const [project, numbered] = await Promise.all([
      input.projectId ? propertyObjectIdsMatching(db, ctx.actor, { projectId: input.projectId }) : undefined,
      input.search ? propertyObjectIdsMatching(db, ctx.actor, { number: input.search, projectId: input.projectId }) : undefined,
    ]);
    const list = await listBookings(db, ctx.actor, input, new Date(), { projectObjectIds: project?.ids, searchObjectIds: numbered?.ids });
    return { ...list, objectsTruncated: Boolean(project?.truncated || numbered?.truncated) };
  }),
  programs: authedProcedure.input(listProgramsInput).query(({ ctx, input }) => listPrograms(ctx.database.db, ctx.actor, input)),
});

export const dealRouter = router({
  cancel: commandProcedure('deal.cancel')
    .input(cancelDealInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'deal.cancel', cancelDealCommand, input)),
  list: authedProcedure.input(listDealsInput).query(({ ctx, input }) => listDeals(ctx.database.db, ctx.actor, input)),
  byId: authedProcedure.input(dealByIdInput).query(({ ctx, input }) => dealById(ctx.database.db, ctx.actor, input)),
});
