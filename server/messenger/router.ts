import { authedProcedure, roleProcedure, router } from '../trpc/init';
import { postMessageCommand, postMessageInput } from './commands/post-message';
import { chatInput, chatOf, POSTING_ROLES } from './queries';

/**
 * messenger router (ADR-0055 deal chat). Reading: any signed-in user in the deal's tenant (cross-tenant
 * roles: every tenant). Posting: the deal's participants — roles gated here, the agent's own deal and
 * the tenant checked again in the command.
 */
export const messengerRouter = router({
  chat: authedProcedure.input(chatInput).query(({ ctx, input }) => chatOf(ctx.database.db, ctx.actor, input)),
  post: roleProcedure(...POSTING_ROLES)
    .input(postMessageInput)
    .mutation(({ ctx, input }) => ctx.database.db.transaction((tx) => postMessageCommand(tx, ctx.actor, input))),
});
