import type { z } from 'zod';
import type { Actor, Role } from '../auth/actor';
import { commandContext, type CommandContext } from '../platform/command-context';
import type { Tx } from '../platform/db';
import type { Context } from './context';
import { roleProcedure } from './init';

/** One command as the API serves it: who may call it, what it takes and answers, and what it does in its transaction. */
export interface CommandProcedureSpec<
  TName extends string,
  TInput extends z.ZodType,
  TOutput extends z.ZodType,
  TContext extends CommandContext<Actor>,
> {
  /** the command's name in its log line and its metrics (`booking.create`) */
  name: TName;
  roles: readonly Role[];
  input: TInput;
  /** what the command answers, exactly: tRPC checks every answer against it, and the console's types come from it */
  output: TOutput;
  /** the command itself, inside the one transaction its state change and its outbox rows commit in */
  handler: (tx: Tx, input: z.output<TInput>, cctx: TContext) => Promise<z.input<TOutput>>;
  /** what a context's commands get beyond the common context (profile: its keyring) */
  context?: (cctx: CommandContext<Actor>, ctx: Context) => TContext;
  /** the log line's message ('command applied' when left out) */
  logMessage?: string;
  /** the log line's fields from the result: ids, statuses, versions — never the input, never personal data */
  logFields?: (result: z.input<TOutput>) => Record<string, unknown>;
  /** a context's own metrics, after the commit; not for an idempotent replay (nothing happened again) */
  onApplied?: (name: TName, cctx: TContext, result: z.input<TOutput>) => void;
  /** a context's own metrics of a refused or failed command (the transaction rolled back) */
  onFailed?: (name: TName, error: unknown) => void;
}

/**
 * The one way a command is served: role check, zod input, one transaction, one command context, then —
 * after the commit — the context's metrics and one log line, and the answer checked against `output`.
 * One procedure a command, spelled out where the router lists it: a loop over a command table would
 * give tRPC's client one inferred input type for all of them.
 */
export function commandProcedure<
  TName extends string,
  TInput extends z.ZodType,
  TOutput extends z.ZodType,
  TContext extends CommandContext<Actor> = CommandContext<Actor>,
>(spec: CommandProcedureSpec<TName, TInput, TOutput, TContext>) {
  return roleProcedure(...spec.roles)
    .input(spec.input)
    .output(spec.output)
    // the handler's answer is typed against the output schema in the spec; tRPC's own check of it cannot
    // be resolved for a schema that is still a type parameter here
    .mutation(({ ctx, input }) => runCommand(ctx, spec, input as z.output<TInput>) as Promise<never>);
}

async function runCommand<TName extends string, TInput extends z.ZodType, TOutput extends z.ZodType, TContext extends CommandContext<Actor>>(
  ctx: Context & { actor: Actor },
  spec: CommandProcedureSpec<TName, TInput, TOutput, TContext>,
  input: z.output<TInput>,
): Promise<z.input<TOutput>> {
  const common = commandContext(ctx.actor, ctx.correlationId);
  const cctx = spec.context ? spec.context(common, ctx) : (common as TContext);
  let result: z.input<TOutput>;
  try {
    result = await ctx.database.db.transaction((tx) => spec.handler(tx, input, cctx));
  } catch (e) {
    spec.onFailed?.(spec.name, e);
    throw e;
  }
  const replayed = cctx.replayed ?? false;
  if (!replayed) spec.onApplied?.(spec.name, cctx, result);
  ctx.logger.info({ command: spec.name, ...spec.logFields?.(result), replayed, correlationId: cctx.correlationId }, spec.logMessage ?? 'command applied');
  return result;
}
