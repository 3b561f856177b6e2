import type { Actor } from '../auth/actor';
import { userIdsMatchingName } from '../auth/directory';
import { objectLabels, propertyObjectIdsMatching } from '../chessboard/queries';
import { buyerNameLookup } from './ports';
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
import { setProgramRewardCommand, setProgramRewardInput } from './commands/set-program-reward';
import { startSaleCommand, startSaleInput } from './commands/start-sale';
import { uploadContractCommand, uploadContractInput } from './commands/upload-contract';
import { uploadReceiptCommand, uploadReceiptInput } from './commands/upload-receipt';
import { recordCommandFailure, recordCommandSuccess } from './metrics';
import { commandRoles, type CrmCommandName } from './permissions';
import {
  bookingById, bookingByIdInput, dealById, dealByIdInput, listBookings, listBookingsInput, listDeals, listDealsInput, listPrograms,
  listProgramsInput,
} from './queries';

/** a word that can be a person's name (letters, a hyphen or a space; two letters at least): the only search that asks auth and profile */
const PERSON_NAME = /^\p{L}[\p{L}\s'-]*\p{L}$/u;

/** "кв. 3012" / "flat 3012" as typed: the number people put after the word */
const flatNumber = (search: string) => search.replace(/^(кв\.?|квартира|flat)\s*/iu, '') || search;

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
  // the object-number search is answered by the chessboard (its objects, in the actor's tenant scope), a
  // name by auth (the deal's agent) and profile (the buyer's surname, the sets the actor may use); crm
  // filters its bookings by the ids it gets back (the project filter it answers itself)
  list: authedProcedure.input(listBookingsInput).query(async ({ ctx, input }) => {
    const { db } = ctx.database;
    const name = input.search && PERSON_NAME.test(input.search) ? input.search : undefined;
    const [numbered, agents, buyers] = await Promise.all([
      input.search ? propertyObjectIdsMatching(db, ctx.actor, { number: flatNumber(input.search), projectId: input.projectId }) : undefined,
      name ? userIdsMatchingName(db, ctx.actor, name) : undefined,
      name ? buyerNameLookup().setIdsMatchingSurname(db, ctx.actor, ctx.env, name) : undefined,
    ]);
    const list = await listBookings(db, ctx.actor, input, new Date(), {
      searchObjectIds: numbered?.ids, searchAgentIds: agents, searchRequisiteSetIds: buyers?.ids,
    });
    return { ...list, objectsTruncated: Boolean(numbered?.truncated || buyers?.truncated) };
  }),
  setProgramReward: commandProcedure('program.setReward')
    .input(setProgramRewardInput)
    .mutation(async ({ ctx, input }) => {
      const program = await ctx.database.db.transaction((tx) => setProgramRewardCommand(tx, input, commandContext(ctx.actor, ctx.correlationId)));
      ctx.logger.info({ command: 'program.setReward', programId: program.id, rewardKind: program.rewardKind, rewardValue: program.rewardValue }, 'crm programme reward set');
      return program;
    }),
  programs: authedProcedure.input(listProgramsInput).query(({ ctx, input }) => listPrograms(ctx.database.db, ctx.actor, input)),
});

export const dealRouter = router({
  cancel: commandProcedure('deal.cancel')
    .input(cancelDealInput)
    .mutation(({ ctx, input }) => runCommand(ctx, 'deal.cancel', cancelDealCommand, input)),
  // each deal with what a picker needs to tell it apart: the flat it holds (chessboard's number) and
  // its buyer (profile's masked name, only of the sets the actor may use)
  list: authedProcedure.input(listDealsInput).query(async ({ ctx, input }) => {
    const { db } = ctx.database;
    const list = await listDeals(db, ctx.actor, input);
    const held = [...new Set(list.items.flatMap((d) => (d.heldObjectId ? [d.heldObjectId] : [])))];
    const sets = [...new Set(list.items.flatMap((d) => (d.buyerRequisiteSetId ? [d.buyerRequisiteSetId] : [])))];
    const [labels, buyers] = await Promise.all([objectLabels(db, ctx.actor, held), buyerNameLookup().maskedBuyerNames(db, ctx.actor, ctx.env, sets)]);
    const numberOf = new Map(labels.map((l) => [l.id, l.number]));
    return {
      ...list,
      items: list.items.map(({ buyerRequisiteSetId, ...d }) => ({
        ...d,
        heldObjectNumber: d.heldObjectId ? numberOf.get(d.heldObjectId) ?? null : null,
        buyerName: buyerRequisiteSetId ? buyers[buyerRequisiteSetId] ?? null : null,
      })),
    };
  }),
  byId: authedProcedure.input(dealByIdInput).query(({ ctx, input }) => dealById(ctx.database.db, ctx.actor, input)),
});
