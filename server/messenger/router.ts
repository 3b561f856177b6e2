import { commandProcedure } from '../trpc/command-procedure';
import { authedProcedure, router } from '../trpc/init';
import { messengerMessagesPosted } from './metrics';
import { postMessageCommand, postMessageInput, postMessageOutput } from './commands/post-message';
import { chatInput, chatOf, POSTING_ROLES } from './queries';

/**
 * messenger router (ADR-0055 deal chat). Reading: any signed-in user in the deal's tenant (cross-tenant
 * roles: every tenant). Posting: the deal's participants — roles gated here, the agent's own deal and
 * the tenant checked again in the command. The log line names the message, never its text.
 */
export const messengerRouter = router({
  chat: authedProcedure.input(chatInput).query(({ ctx, input }) => chatOf(ctx.database.db, ctx.actor, input)),
  post: commandProcedure({
    name: 'messenger.post', roles: POSTING_ROLES, input: postMessageInput, output: postMessageOutput, handler: postMessageCommand,
    logFields: (m) => ({ messageId: m.id }), onApplied: () => messengerMessagesPosted.inc(),
  }),
});
