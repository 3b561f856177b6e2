import { and, asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { TOPICS } from '../../platform/kafka/topics';
import { writeOutbox } from '../../platform/outbox/write';
import { isHeld } from '../property-object';
import { buildings, projects, propertyObjects } from '../schema';
import { assertVisible, notFound, parseInput, visibleProjectTenant } from './command-support';
import { publishPropertyObjectDeleted } from './delete-property-object';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

export const deleteProjectInput = z.object({ projectId: z.string() });
export type DeleteProjectInput = z.input<typeof deleteProjectInput>;

/**
 * Deletes a project: its objects and buildings are removed (a property-object-deleted event each), the
 * project row is kept as deleted (deleted_at; upsertProject restores it) and
 * pin.chessboard.project-deleted.v1 is published. Refused while any of its objects is held.
 * Locks objects before the project row — the order the consumer and the jobs use — so it cannot deadlock with them.
 */
export async function deleteProject(tx: Tx, given: DeleteProjectInput, ctx: CommandContext<Actor>) {
  const { correlationId, now: at } = ctx;
  const input = parseInput(deleteProjectInput, given);
  // visibility first, without a lock: another tenant's project answers NOT_FOUND before any of its rows
  // is locked (nor waited for), so neither the answer nor its timing tells it from a random id
  const tenantId = await visibleProjectTenant(tx, ctx.actor, input.projectId);
  const objects = await tx
    .select({ id: propertyObjects.id, tenantId: propertyObjects.tenantId, projectId: propertyObjects.projectId, status: propertyObjects.status })
    .from(propertyObjects)
    .where(and(eq(propertyObjects.projectId, input.projectId), eq(propertyObjects.tenantId, tenantId)))
    .orderBy(asc(propertyObjects.id))
    .for('update');
  const [project] = await tx.select().from(projects).where(and(eq(projects.id, input.projectId), eq(projects.tenantId, tenantId))).for('update');
  if (!project) throw notFound('PROJECT', input.projectId);
  assertVisible(ctx.actor, project.tenantId, notFound('PROJECT', input.projectId));
  if (project.deletedAt !== null) return { projectId: project.id, deleted: false, deletedObjects: 0, messageId: null };
  const held = objects.filter((o) => isHeld(o.status));
  if (held.length > 0) {
    throw new AppError('CHESSBOARD_PROJECT_HAS_HELD_OBJECTS', 'CONFLICT', `${held.length} property objects of the project are held`, { heldObjectIds: held.slice(0, 20).map((o) => o.id) });
  }
  for (const o of objects) await publishPropertyObjectDeleted(tx, o, at, correlationId);
  await tx.delete(propertyObjects).where(eq(propertyObjects.projectId, project.id));
  await tx.delete(buildings).where(eq(buildings.projectId, project.id));
  await tx
    .update(projects)
    .set({
      deletedAt: at, updatedAt: at, version: project.version + 1, aggregatesRecalcRequestedAt: null,
      propertyObjectsFreeCount: 0, propertyObjectsTotalCount: 0, propertyObjectsHeldCount: 0, propertyObjectsSoldCount: 0,
    })
    .where(eq(projects.id, project.id));
  const messageId = await writeOutbox(tx, 'chessboard', {
    topic: TOPICS.projectDeleted,
    aggregateType: 'Project',
    aggregateId: project.id,
    tenantId: project.tenantId,
    correlationId,
    occurredAt: at,
    payload: { projectId: project.id, tenantId: project.tenantId, deletedAt: at.toISOString() },
  });
  return { projectId: project.id, deleted: true, deletedObjects: objects.length, messageId };
}
