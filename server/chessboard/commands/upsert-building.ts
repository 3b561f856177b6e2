import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { buildings, projects } from '../schema';
import { integerInput, notFound, parseInput, requiredTextInput } from './command-support';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

export const upsertBuildingInput = z.object({
  id: z.string(),
  tenantId: z.string(),
  projectId: z.string(),
  name: requiredTextInput(),
  sections: integerInput('a positive integer', 1),
  floors: integerInput('a positive integer', 1),
});
export type UpsertBuildingInput = z.input<typeof upsertBuildingInput>;

/** Creates or updates a building of a live project. Buildings have no integration event of their own. */
export async function upsertBuilding(tx: Tx, given: UpsertBuildingInput, ctx: CommandContext<Actor>) {
  const at = ctx.now;
  const input = parseInput(upsertBuildingInput, given);
  const { name } = input;
  const [project] = await tx.select({ tenantId: projects.tenantId, deletedAt: projects.deletedAt }).from(projects).where(eq(projects.id, input.projectId));
  if (!project || project.deletedAt !== null || project.tenantId !== input.tenantId) throw notFound('PROJECT', input.projectId);
  const [existing] = await tx.select().from(buildings).where(eq(buildings.id, input.id)).for('update');
  if (!existing) {
    await tx.insert(buildings).values({ id: input.id, tenantId: input.tenantId, projectId: input.projectId, name, sections: input.sections, floors: input.floors, updatedAt: at });
    return { buildingId: input.id, created: true, changed: true };
  }
  if (existing.tenantId !== input.tenantId || existing.projectId !== input.projectId) {
    throw new AppError('CHESSBOARD_BUILDING_PROJECT_MISMATCH', 'CONFLICT', `building ${input.id} belongs to another project`);
  }
  if (existing.name === name && existing.sections === input.sections && existing.floors === input.floors) {
    return { buildingId: input.id, created: false, changed: false };
  }
  await tx.update(buildings).set({ name, sections: input.sections, floors: input.floors, updatedAt: at }).where(eq(buildings.id, input.id));
  return { buildingId: input.id, created: false, changed: true };
}
