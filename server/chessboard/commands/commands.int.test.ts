import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR, type Actor } from '../../auth/actor';
import type { Tx } from '../../platform/db';
import { TOPICS } from '../../platform/kafka/topics';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import {
  bookingOf, consumed, crmEnvelope, insertObjects, OTHER_TENANT, readObject, statusChangedEvents, TENANT,
} from '../../../test/fixtures/chessboard.fixtures';
import { crmPropertyObjectStatusConsumer } from '../crm-property-object-status.consumer';
import { PROPERTY_OBJECT_ERRORS } from '../property-object';
import {
  deleteProject, deletePropertyObject, releaseHoldManually, setPropertyObjectHidden, upsertBuilding, upsertProject, upsertPropertyObject, type UpsertPropertyObjectInput,
} from './index';
import { commandContext } from '../../platform/command-context';

let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

const NOW = new Date('2030-06-01T12:00:00.000Z');
const OPS: Actor = { userId: randomUUID(), role: 'ops', tenantId: null };
const MANAGER: Actor = { userId: randomUUID(), role: 'developer_manager', tenantId: TENANT };
const OTHER_MANAGER: Actor = { userId: randomUUID(), role: 'developer_manager', tenantId: OTHER_TENANT };
const AGENT: Actor = { userId: randomUUID(), role: 'agent', tenantId: TENANT };

const tx = <T>(f: (tx: Tx) => Promise<T>) => t.database.db.transaction(f);
const codeOf = async (p: Promise<unknown>) => p.then(() => undefined, (e) => (e as { code?: string }).code);

async function events(topic: string, aggregateId: string) {
  return t.database.sql<{ payload: { correlationId: string; payload: Record<string, unknown> } }[]>`
    SELECT payload FROM chessboard.outbox WHERE topic = ${topic} AND aggregate_id = ${aggregateId} ORDER BY id`;
}

async function newProject(tenantId = TENANT) {
  const projectId = randomUUID();
  const buildingId = randomUUID();
  await tx((x) => upsertProject(x, { id: projectId, tenantId, name: 'ЖК Тест', city: 'Москва' }, commandContext(SYSTEM_ACTOR, undefined, NOW)));
  await tx((x) => upsertBuilding(x, { id: buildingId, tenantId, projectId, name: 'Корпус 1', sections: 2, floors: 10 }, commandContext(SYSTEM_ACTOR)));
  return { projectId, buildingId, tenantId };
}

const objectInput = (p: { projectId: string; buildingId: string; tenantId: string }, over: Partial<UpsertPropertyObjectInput> = {}): UpsertPropertyObjectInput => ({
  id: randomUUID(), tenantId: p.tenantId, projectId: p.projectId, buildingId: p.buildingId, section: 1, floor: 3, number: '103', rooms: 2, area: 54.3, price: 12_500_000, ...over,
});
/** The seed's and imports' context, at the fixed test clock (objectInput carried `now: NOW` before the context did). */
const AT_NOW = () => commandContext(SYSTEM_ACTOR, undefined, NOW);

describe('upsertProject / upsertBuilding', () => {
  it('creates, is idempotent, updates with a version bump, publishes project-upserted', async () => {
    const id = randomUUID();
    const correlationId = randomUUID();
    const created = await tx((x) => upsertProject(x, { id, tenantId: TENANT, name: 'ЖК Север', city: 'Москва' }, commandContext(SYSTEM_ACTOR, correlationId, NOW)));
    expect(created).toMatchObject({ created: true, version: 1 });
    expect(await tx((x) => upsertProject(x, { id, tenantId: TENANT, name: 'ЖК Север', city: 'Москва' }, commandContext(SYSTEM_ACTOR)))).toMatchObject({ changed: false, messageId: null });
    expect(await tx((x) => upsertProject(x, { id, tenantId: TENANT, name: 'ЖК Север-2', city: 'Москва' }, commandContext(SYSTEM_ACTOR)))).toMatchObject({ changed: true, version: 2 });
    const ev = await events(TOPICS.projectUpserted, id);
    expect(ev.map((e) => [e.payload.payload.name, e.payload.payload.version])).toEqual([['ЖК Север', 1], ['ЖК Север-2', 2]]);
    expect(ev[0].payload).toMatchObject({ correlationId, payload: { projectId: id, tenantId: TENANT, city: 'Москва', propertyObjectsFreeCount: 0, updatedAt: NOW.toISOString() } });
    expect(await codeOf(tx((x) => upsertProject(x, { id, tenantId: OTHER_TENANT, name: 'x', city: 'y' }, commandContext(SYSTEM_ACTOR))))).toBe('CHESSBOARD_PROJECT_TENANT_MISMATCH');
    expect(await codeOf(tx((x) => upsertProject(x, { id: randomUUID(), tenantId: TENANT, name: ' ', city: 'y' }, commandContext(SYSTEM_ACTOR))))).toBe('VALIDATION_ERROR');
  });

  it('a building needs a live project of its tenant', async () => {
    const p = await newProject();
    expect(await codeOf(tx((x) => upsertBuilding(x, { id: randomUUID(), tenantId: OTHER_TENANT, projectId: p.projectId, name: 'B', sections: 1, floors: 1 }, commandContext(SYSTEM_ACTOR))))).toBe('CHESSBOARD_PROJECT_NOT_FOUND');
    expect(await tx((x) => upsertBuilding(x, { id: p.buildingId, tenantId: TENANT, projectId: p.projectId, name: 'Корпус 1', sections: 2, floors: 10 }, commandContext(SYSTEM_ACTOR)))).toMatchObject({ changed: false });
    expect(await tx((x) => upsertBuilding(x, { id: p.buildingId, tenantId: TENANT, projectId: p.projectId, name: 'Корпус 1', sections: 3, floors: 10 }, commandContext(SYSTEM_ACTOR)))).toMatchObject({ changed: true });
  });
});

describe('upsertPropertyObject', () => {
  it('creates Free by default (StatusSource Import), publishes property-object-upserted, requests a recount', async () => {
    const p = await newProject();
    const input = objectInput(p);
    const r = await tx((x) => upsertPropertyObject(x, input, AT_NOW()));
    expect(r).toMatchObject({ created: true, version: 1 });
    expect(await readObject(t.database, input.id)).toMatchObject({ status: 'Free', status_source: 'Import', version: 1 });
    const [ev] = await events(TOPICS.propertyObjectUpserted, input.id);
    expect(ev.payload.payload).toEqual({
      propertyObjectId: input.id, tenantId: TENANT, projectId: p.projectId, buildingId: p.buildingId, number: '103', floor: 3, section: 1,
      rooms: 2, area: 54.3, price: 12_500_000, status: 'Free', version: 1, updatedAt: NOW.toISOString(),
    });
    const [proj] = await t.database.sql`SELECT aggregates_recalc_requested_at FROM chessboard.projects WHERE id = ${p.projectId}`;
    expect(proj.aggregates_recalc_requested_at).not.toBeNull();
  });

  it('INV-CHS-001 Import: Hidden on create; the status of an existing object is not changed by an upsert', async () => {
    const p = await newProject();
    const input = objectInput(p, { status: 'Hidden' });
    await tx((x) => upsertPropertyObject(x, input, AT_NOW()));
    expect((await readObject(t.database, input.id)).status).toBe('Hidden');
    expect(await codeOf(tx((x) => upsertPropertyObject(x, { ...input, status: 'Free' }, AT_NOW())))).toBe(PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
  });

  it('updates attributes with a version bump; the same values again are a no-op', async () => {
    const p = await newProject();
    const input = objectInput(p);
    await tx((x) => upsertPropertyObject(x, input, AT_NOW()));
    expect(await tx((x) => upsertPropertyObject(x, input, AT_NOW()))).toMatchObject({ changed: false });
    expect(await tx((x) => upsertPropertyObject(x, { ...input, price: 13_000_000 }, AT_NOW()))).toMatchObject({ changed: true, version: 2 });
    expect((await events(TOPICS.propertyObjectUpserted, input.id)).map((e) => e.payload.payload.price)).toEqual([12_500_000, 13_000_000]);
  });

  it('refuses a building of another project or tenant, and invalid sizes', async () => {
    const p = await newProject();
    const q = await newProject();
    expect(await codeOf(tx((x) => upsertPropertyObject(x, objectInput({ ...p, buildingId: q.buildingId }), AT_NOW())))).toBe('CHESSBOARD_BUILDING_NOT_FOUND');
    expect(await codeOf(tx((x) => upsertPropertyObject(x, objectInput(p, { area: 0 }), AT_NOW())))).toBe('VALIDATION_ERROR');
  });

  it('invalid input answers VALIDATION_ERROR with the field and its message (the zod schemas keep the former checks\' messages)', async () => {
    const p = await newProject();
    const messageOf = async (run: (x: Tx) => Promise<unknown>) => tx(run).then(() => undefined, (e) => [(e as { code?: string }).code, (e as Error).message]);
    expect(await messageOf((x) => upsertProject(x, { id: randomUUID(), tenantId: TENANT, name: ' ', city: 'y' }, AT_NOW()))).toEqual(['VALIDATION_ERROR', 'name: required']);
    expect(await messageOf((x) => upsertProject(x, { id: randomUUID(), tenantId: TENANT, name: 'x'.repeat(201), city: 'y' }, AT_NOW()))).toEqual(['VALIDATION_ERROR', 'name: at most 200 characters']);
    expect(await messageOf((x) => upsertBuilding(x, { id: randomUUID(), tenantId: TENANT, projectId: p.projectId, name: 'B', sections: 0, floors: 1 }, AT_NOW()))).toEqual(['VALIDATION_ERROR', 'sections: a positive integer']);
    expect(await messageOf((x) => upsertPropertyObject(x, objectInput(p, { number: ' ', area: 0 }), AT_NOW()))).toEqual(['VALIDATION_ERROR', 'number: required']);
    expect(await messageOf((x) => upsertPropertyObject(x, objectInput(p, { floor: 1.5 }), AT_NOW()))).toEqual(['VALIDATION_ERROR', 'floor: an integer']);
    expect(await messageOf((x) => upsertPropertyObject(x, objectInput(p, { rooms: -1 }), AT_NOW()))).toEqual(['VALIDATION_ERROR', 'rooms: a non-negative integer']);
    expect(await messageOf((x) => upsertPropertyObject(x, objectInput(p, { area: 0 }), AT_NOW()))).toEqual(['VALIDATION_ERROR', 'area: a positive number below 100000']);
    expect(await messageOf((x) => upsertPropertyObject(x, objectInput(p, { price: 1e12 }), AT_NOW()))).toEqual(['VALIDATION_ERROR', 'price: a non-negative number below 1e12']);
    expect(await messageOf((x) => releaseHoldManually(x, { propertyObjectId: randomUUID(), reason: '  ' }, commandContext(OPS)))).toEqual(['VALIDATION_ERROR', 'reason: a reason is required']);
    expect(await messageOf((x) => releaseHoldManually(x, { propertyObjectId: randomUUID(), reason: 'x'.repeat(501) }, commandContext(OPS)))).toEqual(['VALIDATION_ERROR', 'reason: at most 500 characters']);
    // the role is checked before the input, as before: an agent with a blank reason is refused for its role
    expect(await messageOf((x) => releaseHoldManually(x, { propertyObjectId: randomUUID(), reason: ' ' }, commandContext(AGENT)))).toEqual(['CHESSBOARD_FORBIDDEN', 'role agent may not change a property object status by hand']);
  });
});

describe('deletePropertyObject / deleteProject', () => {
  it('deletes a Free object with property-object-deleted; a held one is refused', async () => {
    const p = await newProject();
    const input = objectInput(p);
    await tx((x) => upsertPropertyObject(x, input, AT_NOW()));
    const place = { tenantId: TENANT, projectId: p.projectId, buildingId: p.buildingId };
    const [held] = await insertObjects(t.database, place, [{ status: 'Booked' }]);
    expect(await codeOf(tx((x) => deletePropertyObject(x, { propertyObjectId: held }, commandContext(SYSTEM_ACTOR))))).toBe(PROPERTY_OBJECT_ERRORS.HELD);
    await tx((x) => deletePropertyObject(x, { propertyObjectId: input.id }, commandContext(SYSTEM_ACTOR, undefined, NOW)));
    expect(await readObject(t.database, input.id)).toBeUndefined();
    const [ev] = await events(TOPICS.propertyObjectDeleted, input.id);
    expect(ev.payload.payload).toEqual({ propertyObjectId: input.id, tenantId: TENANT, projectId: p.projectId, deletedAt: NOW.toISOString() });
    expect(await codeOf(tx((x) => deletePropertyObject(x, { propertyObjectId: input.id }, commandContext(SYSTEM_ACTOR))))).toBe('CHESSBOARD_PROPERTY_OBJECT_NOT_FOUND');
  });

  it('deleteProject: refused while an object is held; otherwise objects and buildings go, project-deleted is published; upsert restores', async () => {
    const p = await newProject();
    const place = { tenantId: TENANT, projectId: p.projectId, buildingId: p.buildingId };
    const [free, held] = await insertObjects(t.database, place, [{ status: 'Free' }, { status: 'Reserved' }]);
    expect(await codeOf(tx((x) => deleteProject(x, { projectId: p.projectId }, commandContext(SYSTEM_ACTOR))))).toBe('CHESSBOARD_PROJECT_HAS_HELD_OBJECTS');
    await tx((x) => releaseHoldManually(x, { propertyObjectId: held, reason: 'cleanup' }, commandContext(OPS)));
    expect(await codeOf(tx((x) => deleteProject(x, { projectId: p.projectId }, commandContext(OTHER_MANAGER))))).toBe('CHESSBOARD_PROJECT_NOT_FOUND');
    const r = await tx((x) => deleteProject(x, { projectId: p.projectId }, commandContext(SYSTEM_ACTOR, undefined, NOW)));
    expect(r).toMatchObject({ deleted: true, deletedObjects: 2 });
    expect(await t.database.sql`SELECT 1 FROM chessboard.property_objects WHERE project_id = ${p.projectId}`).toHaveLength(0);
    expect(await events(TOPICS.propertyObjectDeleted, free)).toHaveLength(1);
    expect((await events(TOPICS.projectDeleted, p.projectId))[0].payload.payload).toEqual({ projectId: p.projectId, tenantId: TENANT, deletedAt: NOW.toISOString() });
    expect(await tx((x) => deleteProject(x, { projectId: p.projectId }, commandContext(SYSTEM_ACTOR)))).toMatchObject({ deleted: false });
    expect(await tx((x) => upsertProject(x, { id: p.projectId, tenantId: TENANT, name: 'ЖК Тест', city: 'Москва' }, commandContext(SYSTEM_ACTOR)))).toMatchObject({ changed: true });
    const [proj] = await t.database.sql`SELECT deleted_at FROM chessboard.projects WHERE id = ${p.projectId}`;
    expect(proj.deleted_at).toBeNull();
  });
});

describe('releaseHoldManually', () => {
  async function heldObject(status: 'Reserved' | 'Booked' = 'Booked') {
    const p = await newProject();
    const dealId = randomUUID();
    const bookingId = randomUUID();
    const [id] = await insertObjects(t.database, { tenantId: TENANT, projectId: p.projectId, buildingId: p.buildingId }, [
      { status, timer: new Date(NOW.getTime() - 3600_000), holdDealId: dealId, holdBookingId: bookingId, version: 4 },
    ]);
    return { id, dealId, bookingId, projectId: p.projectId };
  }

  it('Manual release: Free, event, history, hold_releases (actor, reason), audit_log', async () => {
    const h = await heldObject();
    const correlationId = randomUUID();
    const r = await tx((x) => releaseHoldManually(x, { propertyObjectId: h.id, reason: 'stuck hold, runbook' }, commandContext(OPS, correlationId, NOW)));
    expect(r).toMatchObject({ fromStatus: 'Booked', toStatus: 'Free', version: 5 });
    expect(await readObject(t.database, h.id)).toMatchObject({
      status: 'Free', booked_until: null, hold_deal_id: null, hold_booking_id: null, status_source: 'Manual', status_changed_at: NOW, version: 5,
    });
    const [ev] = await statusChangedEvents(t.database, h.id);
    expect(ev.message_id).toBe(r.messageId);
    expect(ev.payload).toMatchObject({ correlationId, payload: { fromStatus: 'Booked', toStatus: 'Free', statusSource: 'Manual', holdDealId: null, version: 5 } });
    const [hist] = await t.database.sql`SELECT * FROM chessboard.property_object_status_history WHERE property_object_id = ${h.id}`;
    expect(hist).toMatchObject({ status_source: 'Manual', actor_id: OPS.userId, reason: 'stuck hold, runbook', deal_id: h.dealId, message_id: r.messageId });
    const [rel] = await t.database.sql`SELECT * FROM chessboard.hold_releases WHERE property_object_id = ${h.id}`;
    expect(rel).toMatchObject({ status_source: 'Manual', actor_id: OPS.userId, reason: 'stuck hold, runbook', hold_deal_id: h.dealId, from_status: 'Booked', message_id: r.messageId, run_id: null });
    expect(Number(rel.overdue_by_ms)).toBe(3600_000);
    const [audit] = await t.database.sql`SELECT * FROM ops.audit_log WHERE target_id = ${h.id}`;
    expect(audit).toMatchObject({ actor_id: OPS.userId, action: 'chessboard.release-hold', target_type: 'PropertyObject', reason: 'stuck hold, runbook' });
  });

  it('refused with CHESSBOARD_PROPERTY_OBJECT_NOT_HELD (PRECONDITION_FAILED) when not Reserved/Booked', async () => {
    const h = await heldObject();
    await tx((x) => releaseHoldManually(x, { propertyObjectId: h.id, reason: 'first' }, commandContext(OPS)));
    const err = await tx((x) => releaseHoldManually(x, { propertyObjectId: h.id, reason: 'again' }, commandContext(OPS))).catch((e) => e);
    expect(err).toMatchObject({ code: PROPERTY_OBJECT_ERRORS.NOT_HELD, kind: 'PRECONDITION_FAILED' });
    expect(await t.database.sql`SELECT 1 FROM chessboard.hold_releases WHERE property_object_id = ${h.id}`).toHaveLength(1);
  });

  it('needs a reason, a role that may change statuses, and the tenant of the object', async () => {
    const h = await heldObject('Reserved');
    expect(await codeOf(tx((x) => releaseHoldManually(x, { propertyObjectId: h.id, reason: '  ' }, commandContext(OPS))))).toBe('VALIDATION_ERROR');
    expect(await codeOf(tx((x) => releaseHoldManually(x, { propertyObjectId: h.id, reason: 'x' }, commandContext(AGENT))))).toBe('CHESSBOARD_FORBIDDEN');
    expect(await codeOf(tx((x) => releaseHoldManually(x, { propertyObjectId: h.id, reason: 'x' }, commandContext(OTHER_MANAGER))))).toBe(PROPERTY_OBJECT_ERRORS.NOT_FOUND);
    expect(await codeOf(tx((x) => releaseHoldManually(x, { propertyObjectId: randomUUID(), reason: 'x' }, commandContext(OPS))))).toBe(PROPERTY_OBJECT_ERRORS.NOT_FOUND);
    expect((await readObject(t.database, h.id)).status).toBe('Reserved');
    await tx((x) => releaseHoldManually(x, { propertyObjectId: h.id, reason: 'x' }, commandContext(MANAGER)));
    expect((await readObject(t.database, h.id)).status).toBe('Free');
  });

  it('tombstones the released booking: its late CRM events do not re-hold the object', async () => {
    const h = await heldObject('Reserved');
    await tx((x) => releaseHoldManually(x, { propertyObjectId: h.id, reason: 'stuck' }, commandContext(OPS)));
    const b = bookingOf(h.id, TENANT, { bookingId: h.bookingId, dealId: h.dealId });
    const envelope = crmEnvelope(TOPICS.bookingConfirmed, b.confirmed(new Date(NOW.getTime() + 86_400_000), 5));
    const outcome = await tx((x) => crmPropertyObjectStatusConsumer.handle(x, consumed(TOPICS.bookingConfirmed, envelope), { logger: t.logger, env: t.env }));
    expect(outcome.result).toBe('no-op');
    expect((await readObject(t.database, h.id)).status).toBe('Free');
  });
});

describe('setPropertyObjectHidden (Manual Free ↔ Hidden)', () => {
  it('hides and shows with an event each; a held object is refused', async () => {
    const p = await newProject();
    const place = { tenantId: TENANT, projectId: p.projectId, buildingId: p.buildingId };
    const [free, held] = await insertObjects(t.database, place, [{ status: 'Free' }, { status: 'Reserved' }]);
    expect(await tx((x) => setPropertyObjectHidden(x, { propertyObjectId: free, hidden: true, reason: 'not for sale yet' }, commandContext(MANAGER)))).toMatchObject({ changed: true, status: 'Hidden' });
    expect(await tx((x) => setPropertyObjectHidden(x, { propertyObjectId: free, hidden: true, reason: 'again' }, commandContext(MANAGER)))).toMatchObject({ changed: false });
    expect(await tx((x) => setPropertyObjectHidden(x, { propertyObjectId: free, hidden: false, reason: 'on sale' }, commandContext(MANAGER)))).toMatchObject({ changed: true, status: 'Free' });
    expect((await statusChangedEvents(t.database, free)).map((e) => `${e.payload.payload.fromStatus}→${e.payload.payload.toStatus}:${e.payload.payload.statusSource}`))
      .toEqual(['Free→Hidden:Manual', 'Hidden→Free:Manual']);
    expect(await codeOf(tx((x) => setPropertyObjectHidden(x, { propertyObjectId: held, hidden: true, reason: 'x' }, commandContext(MANAGER))))).toBe(PROPERTY_OBJECT_ERRORS.TRANSITION_NOT_ALLOWED);
  });
});
