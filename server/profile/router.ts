import type { Actor } from '../auth/actor';
import type { Tx } from '../platform/db';
import type { ProfileKeyEnv } from './env';
import type { Context } from '../trpc/context';
import { roleProcedure, router } from '../trpc/init';
import {
  createRequisiteSetCommand, createRequisiteSetInput, editRequisiteSetCommand, editRequisiteSetInput, eraseRequisiteSetCommand,
  eraseRequisiteSetInput, type ProfileContext,
} from './commands';
import { keyringFromEnv, type Keyring } from './crypto';
import { profileRoles } from './permissions';
import { listRequisiteReveals, listRequisiteRevealsInput, listRequisiteSets, listRequisiteSetsInput, revealRequisiteSet, revealRequisiteSetInput } from './queries';

const keyrings = new WeakMap<ProfileKeyEnv, Keyring>();
/** one keyring per environment object (decoded once) */
export function keyringOf(env: ProfileKeyEnv): Keyring {
  let k = keyrings.get(env);
  if (!k) keyrings.set(env, (k = keyringFromEnv(env)));
  return k;
}

const profileContext = (ctx: Context & { actor: Actor }): ProfileContext => ({
  actor: ctx.actor, keyring: keyringOf(ctx.env), correlationId: ctx.correlationId, now: new Date(),
});

/**
 * One profile command in one transaction. The log line carries ids and the action only — never the
 * input (it is personal data).
 */
async function run<I, O extends { id: string }>(ctx: Context & { actor: Actor }, action: string, command: (tx: Tx, input: I, p: ProfileContext) => Promise<O>, input: I): Promise<O> {
  const result = await ctx.database.db.transaction((tx) => command(tx, input, profileContext(ctx)));
  ctx.logger.info({ action, requisiteSetId: result.id, correlationId: ctx.correlationId }, 'profile command applied');
  return result;
}

/** DESIGN.md: profile — buyers' requisite sets (personal data, encrypted); crm keeps only their id. */
export const profileRouter = router({
  create: roleProcedure(...profileRoles('profile.create'))
    .input(createRequisiteSetInput)
    .mutation(({ ctx, input }) => run(ctx, 'profile.create', createRequisiteSetCommand, input)),
  edit: roleProcedure(...profileRoles('profile.edit'))
    .input(editRequisiteSetInput)
    .mutation(({ ctx, input }) => run(ctx, 'profile.edit', editRequisiteSetCommand, input)),
  erase: roleProcedure(...profileRoles('profile.erase'))
    .input(eraseRequisiteSetInput)
    .mutation(({ ctx, input }) => run(ctx, 'profile.erase', eraseRequisiteSetCommand, input)),
  list: roleProcedure(...profileRoles('profile.list'))
    .input(listRequisiteSetsInput)
    .query(({ ctx, input }) => listRequisiteSets(ctx.database.db, ctx.actor, keyringOf(ctx.env), input)),
  // a mutation, not a query: it writes the audit row, and a GET must not be cached or prefetched
  reveal: roleProcedure(...profileRoles('profile.reveal'))
    .input(revealRequisiteSetInput)
    .mutation(async ({ ctx, input }) => {
      const result = await ctx.database.db.transaction((tx) => revealRequisiteSet(tx, input, profileContext(ctx)));
      ctx.logger.info({ action: 'profile.reveal', requisiteSetId: result.id, version: result.version, bookingId: result.bookingId, correlationId: ctx.correlationId }, 'requisite set revealed');
      return result;
    }),
  // the reveal log (ops, PIN managers): who read which set, when and why
  reveals: roleProcedure(...profileRoles('profile.reveals'))
    .input(listRequisiteRevealsInput)
    .query(({ ctx, input }) => listRequisiteReveals(ctx.database.db, ctx.actor, input)),
});
