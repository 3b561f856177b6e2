import { eq } from 'drizzle-orm';
import type { Tx } from '../../platform/db';
import { AppError, ValidationError } from '../../platform/errors';
import { TOPICS } from '../../platform/kafka/topics';
import { writeOutbox } from '../../platform/outbox/write';
import { assertTransitionAllowed, createImported } from '../property-object';
import { buildings, projects, propertyObjects } from '../schema';
import { metaOf, notFound, requiredText, type CommandMeta } from './command-support';
import { requestProjectAggregatesRecalc } from './property-object-persistence';

export interface UpsertPropertyObjectInput extends CommandMeta {
  id: string;
  tenantId: string;
  projectId: string;
  buildingId: string;
  section: number;
  floor: number;
  number: string;
  rooms: number;
  area: number;
  price: number;
  /** on create only (INV-CHS-001: Import creates Free or Hidden); default Free */
  status?: 'Free' | 'Hidden';
}

type ObjectRow = typeof propertyObjects.$inferSelect;

export async function publishPropertyObjectUpserted(tx: Tx, o: ObjectRow, correlationId: string): Promise<string> {
  return writeOutbox(tx, 'chessboard', {
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
  });
}

function validate(input: UpsertPropertyObjectInput) {
  const number = requiredText('number', input.number, 32);
  if (!Number.isInteger(input.section) || input.section < 1) throw new ValidationError('section', 'a positive integer');
  if (!Number.isInteger(input.floor)) throw new ValidationError('floor', 'an integer');
  if (!Number.isInteger(input.rooms) || input.rooms < 0) throw new ValidationError('rooms', 'a non-negative integer');
  if (!(input.area > 0) || input.area >= 100_000) throw new ValidationError('area', 'a positive number below 100000');
  if (!(input.price >= 0) || input.price >= 1e12) throw new ValidationError('price', 'a non-negative number below 1e12');
  return number;
}

/**
 * Creates (status Free or Hidden, StatusSource Import) or updates the attributes of a property object,
 * publishes pin.chessboard.property-object-upserted.v1 and, on create, requests the project recount.
 * The status of an existing object changes only through its transitions (INV-CHS-001), so an update
 * asking for another status is refused. Same values again: nothing written (idempotent).
 */
export async function upsertPropertyObject(tx: Tx, input: UpsertPropertyObjectInput) {
  const { correlationId, at } = metaOf(input);
  const number = validate(input);
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
