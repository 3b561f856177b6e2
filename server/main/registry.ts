import { provideInvestorTenants } from '../chessboard/ports';
import { investorDealTenants } from '../crm/commands/tenant-scope';
import { provideBuyerNameLookup, provideRequisiteReferenceCheck } from '../crm/ports';
import { registerLists } from '../platform/registry';
import { checkRequisiteReference, maskedBuyerNames, requisiteSetIdsMatchingSurname } from '../profile/module-api';
import { consumers } from './consumers';
import { createJobs, JOB_NAMES } from './jobs';
import { OUTBOX_NAMES } from './outboxes';

/**
 * The wiring of the composition root, imported for its effect by every entry: the app router, the web's
 * services, the worker (and the test harness).
 * - the job and consumer lists, handed down to platform (server/platform/registry.ts) for the modules that
 *   read them without naming a context: the ops dashboard's jobs, run-now and consumer groups;
 * - the ports by which one context asks another without importing it back: crm asks profile whether a
 *   requisite set may be referenced and for buyers' masked names (profile asks crm which bookings reference a set), the chessboard asks
 *   crm for an investor's developers (crm's booking list filters by the chessboard's objects).
 */
registerLists({ jobNames: JOB_NAMES, createJobs, consumers, outboxes: OUTBOX_NAMES });
provideRequisiteReferenceCheck(checkRequisiteReference);
provideBuyerNameLookup({ setIdsMatchingSurname: requisiteSetIdsMatchingSurname, maskedBuyerNames });
provideInvestorTenants(investorDealTenants);
