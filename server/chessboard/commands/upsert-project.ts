import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { TOPICS } from '../../platform/kafka/topics';
import { writeOutbox } from '../../platform/outbox/write';
import { projects } from '../schema';
import { parseInput, requiredTextInput } from './command-support';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

export const upsertProjectInput = z.object({
  id: z.string(),
  tenantId: z.string(),
  name: requiredTextInput(),
  city: requiredTextInput(),
});
export type UpsertProjectInput = z.input<typeof upsertProjectInput>;

type ProjectRow = typeof projects.$inferSelect;

/** One builder per event type: the envelope lines repeat in publishPropertyObjectUpserted by design (each payload is its own contract). */
export async function publishProjectUpserted(tx: Tx, p: ProjectRow, correlationId: string): Promise<string> {
  return writeOutbox(tx, 'chessboard', {
    topic: TOPICS.projectUpserted,
    aggregateType: 'Project',
    aggregateId: p.id,
    tenantId: p.tenantId,
    correlationId,
    occurredAt: p.updatedAt,
    payload: {
      projectId: p.id, tenantId: p.tenantId, name: p.name, city: p.city,
      propertyObjectsFreeCount: p.propertyObjectsFreeCount, version: p.version, updatedAt: p.updatedAt.toISOString(),
    },
  });
}

/**
 * Creates or updates a project (seed / import) and publishes pin.chessboard.project-upserted.v1.
 * Upserting a deleted project restores it. Same values again: nothing written (idempotent).
 */
export async function upsertProject(tx: Tx, given: UpsertProjectInput, ctx: CommandContext<Actor>) {
  const { correlationId, now: at } = ctx;
  const input = parseInput(upsertProjectInput, given);
  const { name, city } = input;
  const [existing] = await tx.select().from(projects).where(eq(projects.id, input.id)).for('update');
  if (!existing) {
    const [row] = await tx.insert(projects).values({ id: input.id, tenantId: input.tenantId, name, city, version: 1, updatedAt: at }).returning();
    const messageId = await publishProjectUpserted(tx, row, correlationId);
    return { projectId: row.id, created: true, changed: true, version: row.version, messageId };
  }
  if (existing.tenantId !== input.tenantId) {
    throw new AppError('CHESSBOARD_PROJECT_TENANT_MISMATCH', 'CONFLICT', `project ${input.id} belongs to another tenant`);
  }
  if (existing.name === name && existing.city === city && existing.deletedAt === null) {
    return { projectId: existing.id, created: false, changed: false, version: existing.version, messageId: null };
  }
  const [row] = await tx
    .update(projects)
    .set({ name, city, deletedAt: null, version: existing.version + 1, updatedAt: at })
    .where(eq(projects.id, input.id))
    .returning();
  const messageId = await publishProjectUpserted(tx, row, correlationId);
  return { projectId: row.id, created: false, changed: true, version: row.version, messageId };
}
