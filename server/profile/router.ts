import type { Actor } from '../auth/actor';
import type { CommandContext } from '../platform/command-context';
import { commandProcedure } from '../trpc/command-procedure';
import type { ProfileKeyEnv } from './env';
import type { Context } from '../trpc/context';
import { roleProcedure, router } from '../trpc/init';
import {
  createRequisiteSetCommand, createRequisiteSetInput, createRequisiteSetOutput, editRequisiteSetCommand, editRequisiteSetInput, editRequisiteSetOutput,
  eraseRequisiteSetCommand, eraseRequisiteSetInput, eraseRequisiteSetOutput, type ProfileContext,
} from './commands';
import { keyringFromEnv, type Keyring } from './crypto';
import { profileRoles, type ProfileAction } from './permissions';
import {
  listRequisiteReveals, listRequisiteRevealsInput, listRequisiteSets, listRequisiteSetsInput, revealRequisiteSet, revealRequisiteSetInput,
  revealRequisiteSetOutput,
} from './queries';

const keyrings = new WeakMap<ProfileKeyEnv, Keyring>();
/** one keyring per environment object (decoded once) */
export function keyringOf(env: ProfileKeyEnv): Keyring {
  let k = keyrings.get(env);
  if (!k) keyrings.set(env, (k = keyringFromEnv(env)));
  return k;
}

/** A profile command's context: the common one and the keyring; its log line carries ids only, never the input (personal data). */
const profileCommand = (name: ProfileAction) => ({
  name, roles: profileRoles(name), logMessage: 'profile command applied',
  context: (cctx: CommandContext<Actor>, ctx: Context): ProfileContext => ({ ...cctx, keyring: keyringOf(ctx.env) }),
});

const setLogFields = (r: { id: string }) => ({ requisiteSetId: r.id });

/** DESIGN.md: profile — buyers' requisite sets (personal data, encrypted); crm keeps only their id. */
export const profileRouter = router({
  create: commandProcedure({ ...profileCommand('profile.create'), input: createRequisiteSetInput, output: createRequisiteSetOutput, handler: createRequisiteSetCommand, logFields: setLogFields }),
  edit: commandProcedure({ ...profileCommand('profile.edit'), input: editRequisiteSetInput, output: editRequisiteSetOutput, handler: editRequisiteSetCommand, logFields: setLogFields }),
  erase: commandProcedure({ ...profileCommand('profile.erase'), input: eraseRequisiteSetInput, output: eraseRequisiteSetOutput, handler: eraseRequisiteSetCommand, logFields: setLogFields }),
  list: roleProcedure(...profileRoles('profile.list'))
    .input(listRequisiteSetsInput)
    .query(({ ctx, input }) => listRequisiteSets(ctx.database.db, ctx.actor, keyringOf(ctx.env), input)),
  // a mutation, not a query: it writes the audit row, and a GET must not be cached or prefetched
  reveal: commandProcedure({
    ...profileCommand('profile.reveal'), logMessage: 'requisite set revealed', input: revealRequisiteSetInput, output: revealRequisiteSetOutput,
    handler: revealRequisiteSet, logFields: (r) => ({ requisiteSetId: r.id, version: r.version, bookingId: r.bookingId }),
  }),
  // the reveal log (ops, PIN managers): who read which set, when and why
  reveals: roleProcedure(...profileRoles('profile.reveals'))
    .input(listRequisiteRevealsInput)
    .query(({ ctx, input }) => listRequisiteReveals(ctx.database.db, ctx.actor, input)),
});
