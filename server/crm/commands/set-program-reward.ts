import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { crmError } from '../errors';
import { authorize } from '../permissions';
import { bookingPrograms } from '../schema';
import { tenantFilter } from './tenant-scope';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import { bookingProgramOutput } from './output';

export const setProgramRewardInput = z.strictObject({
  programId: z.uuid(),
  /** a percentage of the flat's price (0–100], or a fixed sum in roubles; null: the programme pays no reward */
  reward: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('percent'), value: z.number().gt(0).max(100) }),
    z.strictObject({ kind: z.literal('fixed'), value: z.number().min(0).max(1_000_000_000) }),
  ]).nullable(),
});
export type SetProgramRewardInput = z.infer<typeof setProgramRewardInput>;
/** the programme with its new reward */
export const setProgramRewardOutput = bookingProgramOutput;

/**
 * The developer manager sets the agents' reward of one of its programmes. It applies to payments
 * confirmed from now on (booking-paid carries the rule it used); rewards already accrued keep theirs.
 * A programme of another tenant is not found, like a missing one.
 */
export async function setProgramRewardCommand(tx: Tx, input: SetProgramRewardInput, ctx: CommandContext<Actor>) {
  authorize(ctx.actor, 'program.setReward');
  const [program] = await tx.update(bookingPrograms)
    .set({ rewardKind: input.reward?.kind ?? null, rewardValue: input.reward ? Math.round(input.reward.value * 100) / 100 : null })
    .where(and(eq(bookingPrograms.id, input.programId), tenantFilter(ctx.actor, bookingPrograms.tenantId)))
    .returning();
  if (!program) throw crmError('CRM_PROGRAM_NOT_FOUND', 'No such booking program', { programId: input.programId });
  return program;
}
