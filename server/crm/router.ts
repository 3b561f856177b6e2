import { userIdsMatchingName } from '../auth/directory';
import { objectLabels, propertyObjectIdsMatching } from '../chessboard/queries';
import { buyerNameLookup } from './ports';
import { commandProcedure } from '../trpc/command-procedure';
import { authedProcedure, router } from '../trpc/init';
import { cancelBookingCommand, cancelBookingInput, cancelBookingOutput } from './commands/cancel-booking';
import { cancelDealCommand, cancelDealInput, cancelDealOutput, type CancelDealResult } from './commands/cancel-deal';
import { confirmBookingCommand, confirmBookingInput, confirmBookingOutput } from './commands/confirm-booking';
import { confirmPaymentCommand, confirmPaymentInput, confirmPaymentOutput } from './commands/confirm-payment';
import { createBookingCommand, createBookingInput, createBookingOutput } from './commands/create-booking';
import { extendBookingCommand, extendBookingInput, extendBookingOutput } from './commands/extend-booking';
import { setProgramRewardCommand, setProgramRewardInput, setProgramRewardOutput } from './commands/set-program-reward';
import { startSaleCommand, startSaleInput, startSaleOutput } from './commands/start-sale';
import { uploadContractCommand, uploadContractInput, uploadContractOutput } from './commands/upload-contract';
import { uploadReceiptCommand, uploadReceiptInput, uploadReceiptOutput } from './commands/upload-receipt';
import type { BookingRecord } from './booking';
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
 * What every crm command shares: its roles, its log line, and crm's saga metrics (recorded after the
 * commit, never for an idempotent replay).
 */
const crmCommand = (name: CrmCommandName) => ({
  name, roles: commandRoles(name), logMessage: 'crm command applied', onApplied: recordCommandSuccess, onFailed: recordCommandFailure,
});

/** ids and statuses only (no names, no documents) */
const bookingLogFields = (b: BookingRecord) => ({ bookingId: b.id, dealId: b.dealId, status: b.status, version: b.version });
const dealLogFields = (r: CancelDealResult) => ({ dealId: r.deal.id, status: r.deal.status, cancelledBookingIds: r.cancelledBookings.map((b) => b.id) });

// One procedure a command, spelled out: a loop over a command table would give tRPC's client one
// inferred input type for all of them (the `duplicates` tool sees the repetition; it is deliberate).
export const bookingRouter = router({
  create: commandProcedure({ ...crmCommand('booking.create'), input: createBookingInput, output: createBookingOutput, handler: createBookingCommand, logFields: bookingLogFields }),
  uploadContract: commandProcedure({ ...crmCommand('booking.uploadContract'), input: uploadContractInput, output: uploadContractOutput, handler: uploadContractCommand, logFields: bookingLogFields }),
  uploadReceipt: commandProcedure({ ...crmCommand('booking.uploadReceipt'), input: uploadReceiptInput, output: uploadReceiptOutput, handler: uploadReceiptCommand, logFields: bookingLogFields }),
  confirm: commandProcedure({ ...crmCommand('booking.confirm'), input: confirmBookingInput, output: confirmBookingOutput, handler: confirmBookingCommand, logFields: bookingLogFields }),
  confirmPayment: commandProcedure({ ...crmCommand('booking.confirmPayment'), input: confirmPaymentInput, output: confirmPaymentOutput, handler: confirmPaymentCommand, logFields: bookingLogFields }),
  extend: commandProcedure({ ...crmCommand('booking.extend'), input: extendBookingInput, output: extendBookingOutput, handler: extendBookingCommand, logFields: bookingLogFields }),
  cancel: commandProcedure({ ...crmCommand('booking.cancel'), input: cancelBookingInput, output: cancelBookingOutput, handler: cancelBookingCommand, logFields: bookingLogFields }),
  startSale: commandProcedure({ ...crmCommand('booking.startSale'), input: startSaleInput, output: startSaleOutput, handler: startSaleCommand, logFields: bookingLogFields }),

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
  setProgramReward: commandProcedure({
    ...crmCommand('program.setReward'), input: setProgramRewardInput, output: setProgramRewardOutput, handler: setProgramRewardCommand,
    logFields: (p) => ({ programId: p.id, rewardKind: p.rewardKind, rewardValue: p.rewardValue }),
  }),
  programs: authedProcedure.input(listProgramsInput).query(({ ctx, input }) => listPrograms(ctx.database.db, ctx.actor, input)),
});

export const dealRouter = router({
  cancel: commandProcedure({ ...crmCommand('deal.cancel'), input: cancelDealInput, output: cancelDealOutput, handler: cancelDealCommand, logFields: dealLogFields }),
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
