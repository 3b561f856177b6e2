import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { TOPICS } from '../../platform/kafka/topics';
import { writeOutbox, type OutboxEvent } from '../../platform/outbox/write';
import { assertTransitionAllowed, createImported } from '../property-object';
import { buildings, projects, propertyObjects } from '../schema';
import { integerInput, notFound, parseInput, requiredTextInput } from './command-support';
import { requestProjectAggregatesRecalc } from '../property-object-persistence';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';

// `number` is checked first: the first issue is the one reported, and a missing number is the likeliest
export const upsertPropertyObjectInput = z.object({
  id: z.string(),
  tenantId: z.string(),
  projectId: z.string(),
  buildingId: z.string(),
  number: requiredTextInput(32),
  section: integerInput('a positive integer', 1),
  floor: integerInput('an integer'),
  rooms: integerInput('a non-negative integer', 0),
  area: z.number({ error: 'a positive number below 100000' }).gt(0, { error: 'a positive number below 100000' }).lt(100_000, { error: 'a positive number below 100000' }),
  price: z.number({ error: 'a non-negative number below 1e12' }).min(0, { error: 'a non-negative number below 1e12' }).lt(1e12, { error: 'a non-negative number below 1e12' }),
  /** on create only (INV-CHS-001: Import creates Free or Hidden); default Free */
  status: z.enum(['Free', 'Hidden']).optional(),
});
export type UpsertPropertyObjectInput = z.input<typeof upsertPropertyObjectInput>;

type ObjectRow = typeof propertyObjects.$inferSelect;

/**
 * The pin.chessboard.property-object-upserted.v1 event of a row as it is: the object's whole state at its
 * version (an update's event, and each object's event in a snapshot).
 */
export function propertyObjectUpsertedEvent(o: ObjectRow, correlationId: string): OutboxEvent<typeof TOPICS.propertyObjectUpserted> {
  return {
    topic: TOPICS.propertyObjectUpserted,
    aggregateType: 'PropertyObject',
    aggregateId: o.id,
    tenantId: o.tenantId,
    correlationId,
    occurredAt: o.updatedAt,
    payload: {
      propertyObjectId: o.id, tenantId: o.tenantId, projectId: o.projectId, buildingId: o.buildingId, number: o.number,
      floor: o.floor, section: o.section, rooms: o.rooms, area: o.area, price: o.price, status: o.status,
      version: o.version, updatedAt: o.updatedAt.toISOString(),
    },
  };
}

export async function publishPropertyObjectUpserted(tx: Tx, o: ObjectRow, correlationId: string): Promise<string> {
  return writeOutbox(tx, 'chessboard', propertyObjectUpsertedEvent(o, correlationId));
}

/**
 * Creates (status Free or Hidden, StatusSource Import) or updates the attributes of a property object,
 * publishes pin.chessboard.property-object-upserted.v1 and, on create, requests the project recount.
 * The status of an existing object changes only through its transitions (INV-CHS-001), so an update
 * asking for another status is refused. Same values again: nothing written (idempotent).
 */
export async function upsertPropertyObject(tx: Tx, given: UpsertPropertyObjectInput, ctx: CommandContext<Actor>) {
  const { correlationId, now: at } = ctx;
  const input = parseInput(upsertPropertyObjectInput, given);
  const { number } = input;
  const [building] = await tx
    .select({ tenantId: buildings.tenantId, projectId: buildings.projectId, projectDeletedAt: projects.deletedAt })
    .from(buildings)
    .innerJoin(projects, eq(projects.id, buildings.projectId))
    .where(eq(buildings.id, input.buildingId));
  if (!building || building.tenantId !== input.tenantId || building.projectId !== input.projectId || building.projectDeletedAt !== null) {
    throw notFound('BUILDING', input.buildingId);
  }
  const attrs = { buildingId: input.buildingId, section: input.section, floor: input.floor, number, rooms: input.rooms, area: input.area, price: input.price };
  const [existing] = await tx.select().from(propertyObjects).where(eq(propertyObjects.id, input.id)).for('update');

  if (!existing) {
    const state = createImported(input.status ?? 'Free', at);
    const [row] = await tx
      .insert(propertyObjects)
      .values({ id: input.id, tenantId: input.tenantId, projectId: input.projectId, ...attrs, ...state })
      .returning();
    const messageId = await publishPropertyObjectUpserted(tx, row, correlationId);
    await requestProjectAggregatesRecalc(tx, [row.projectId], at);
    return { propertyObjectId: row.id, created: true, changed: true, version: row.version, messageId };
  }

  if (existing.tenantId !== input.tenantId || existing.projectId !== input.projectId) {
    throw new AppError('CHESSBOARD_PROPERTY_OBJECT_PROJECT_MISMATCH', 'CONFLICT', `property object ${input.id} belongs to another project`);
  }
  // INV-CHS-001 allows Import no move at all (it sets the status on create only): the domain's guard refuses it
  if (input.status !== undefined && input.status !== existing.status) assertTransitionAllowed(existing.status, input.status, 'Import');
  const same = existing.buildingId === attrs.buildingId && existing.section === attrs.section && existing.floor === attrs.floor
    && existing.number === attrs.number && existing.rooms === attrs.rooms && Number(existing.area) === attrs.area && Number(existing.price) === attrs.price;
  if (same) return { propertyObjectId: existing.id, created: false, changed: false, version: existing.version, messageId: null };
  const [row] = await tx
    .update(propertyObjects)
    .set({ ...attrs, version: existing.version + 1, updatedAt: at })
    .where(eq(propertyObjects.id, input.id))
    .returning();
  const messageId = await publishPropertyObjectUpserted(tx, row, correlationId);
  return { propertyObjectId: row.id, created: false, changed: true, version: row.version, messageId };
}
