import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../auth/actor';
import { createContextFor } from '../trpc/context';
import { createCallerFactory } from '../trpc/init';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { insertObjects, insertProject, OTHER_TENANT, readObject, TENANT } from '../../test/fixtures/chessboard.fixtures';
import { chessboardRouter } from './router';

let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

const callerAs = (actor: Actor) => createCallerFactory(chessboardRouter)(createContextFor({ database: t.database, env: t.env, logger: t.logger }, actor));
const as = (role: Actor['role'], tenantId: string | null = TENANT) => {
  const actor: Actor = { userId: randomUUID(), role, tenantId: role === 'ops' || role === 'pin_manager' ? null : tenantId };
  return { actor, caller: callerAs(actor) };
};

async function errorOf(p: Promise<unknown>): Promise<TRPCError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

const objectExists = async (id: string) => (await t.database.sql`SELECT 1 FROM chessboard.property_objects WHERE id = ${id}`).length === 1;
const auditOf = (targetId: string) =>
  t.database.sql<{ action: string; actor_id: string; reason: string }[]>`SELECT action, actor_id, reason FROM ops.audit_log WHERE target_id = ${targetId} ORDER BY id`;
const outboxOf = (aggregateId: string) =>
  t.database.sql<{ topic: string }[]>`SELECT topic FROM chessboard.outbox WHERE aggregate_id = ${aggregateId} ORDER BY id`;

describe('catalog actions of a developer manager', () => {
  it('withdrawObject deletes a Free object, publishes property-object-deleted and audits who and why', async () => {
    const [id] = await insertObjects(t.database, await insertProject(t.database), [{ status: 'Free' }]);
    const { actor, caller } = as('developer_manager');
    await caller.withdrawObject({ propertyObjectId: id, reason: '  sold off-market  ' });
    expect(await objectExists(id)).toBe(false);
    expect((await outboxOf(id)).map((r) => r.topic)).toContain('pin.chessboard.property-object-deleted.v1');
    expect(await auditOf(id)).toEqual([{ action: 'chessboard.withdraw-property-object', actor_id: actor.userId, reason: 'sold off-market' }]);
  });

  it.each(['agent', 'viewer', 'ops'] as const)('a %s is refused (FORBIDDEN) and nothing is written', async (role) => {
    const [id] = await insertObjects(t.database, await insertProject(t.database), [{ status: 'Free' }]);
    const { caller } = as(role);
    for (const call of [
      () => caller.withdrawObject({ propertyObjectId: id, reason: 'x' }),
      () => caller.setObjectHidden({ propertyObjectId: id, hidden: true, reason: 'x' }),
    ]) expect((await errorOf(call())).code).toBe('FORBIDDEN');
    expect(await objectExists(id)).toBe(true);
    expect(await auditOf(id)).toEqual([]);
  });

  it("another tenant's object answers NOT_FOUND and stays", async () => {
    const place = await insertProject(t.database, OTHER_TENANT);
    const [id] = await insertObjects(t.database, place, [{ status: 'Free' }]);
    const { caller } = as('developer_manager', TENANT);
    // one call at a time: promises made up front reject before the loop awaits them (an unhandled
    // rejection that fails the whole vitest run when the machine is slow)
    for (const call of [
      () => caller.withdrawObject({ propertyObjectId: id, reason: 'x' }),
      () => caller.setObjectHidden({ propertyObjectId: id, hidden: true, reason: 'x' }),
      () => caller.withdrawProject({ projectId: place.projectId, reason: 'x' }),
    ]) expect((await errorOf(call())).code).toBe('NOT_FOUND');
    expect(await objectExists(id)).toBe(true);
    expect((await readObject(t.database, id)).status).toBe('Free');
  });

  it('a blank reason or a malformed id is BAD_REQUEST; a held object is CONFLICT; nothing is written', async () => {
    const [free, held] = await insertObjects(t.database, await insertProject(t.database), [{ status: 'Free' }, { status: 'Reserved' }]);
    const { caller } = as('developer_manager');
    expect((await errorOf(caller.withdrawObject({ propertyObjectId: free, reason: '   ' }))).code).toBe('BAD_REQUEST');
    expect((await errorOf(caller.withdrawObject({ propertyObjectId: 'nope', reason: 'x' }))).code).toBe('BAD_REQUEST');
    const conflict = await errorOf(caller.withdrawObject({ propertyObjectId: held, reason: 'x' }));
    expect(conflict.code).toBe('CONFLICT');
    expect((conflict.cause as { code?: string }).code).toBe('CHESSBOARD_PROPERTY_OBJECT_HELD');
    expect(await objectExists(free)).toBe(true);
    expect(await objectExists(held)).toBe(true);
    expect([...await auditOf(free), ...await auditOf(held)]).toEqual([]);
  });

  it('setObjectHidden hides a Free object and shows it again, each audited with its reason', async () => {
    const [id] = await insertObjects(t.database, await insertProject(t.database), [{ status: 'Free' }]);
    const { caller } = as('developer_manager');
    expect(await caller.setObjectHidden({ propertyObjectId: id, hidden: true, reason: 'photos pending' })).toMatchObject({ changed: true, status: 'Hidden' });
    expect((await readObject(t.database, id)).status).toBe('Hidden');
    expect(await caller.setObjectHidden({ propertyObjectId: id, hidden: false, reason: 'photos done' })).toMatchObject({ changed: true, status: 'Free' });
    expect((await auditOf(id)).map((a) => [a.action, a.reason])).toEqual([
      ['chessboard.hide-property-object', 'photos pending'], ['chessboard.show-property-object', 'photos done'],
    ]);
  });

  it('withdrawProject deletes the project with its objects (an event each) and audits it once', async () => {
    const place = await insertProject(t.database);
    const ids = await insertObjects(t.database, place, [{ status: 'Free' }, { status: 'Hidden' }, { status: 'Sold' }]);
    const { actor, caller } = as('pin_manager');
    expect(await caller.withdrawProject({ projectId: place.projectId, reason: 'project cancelled' })).toMatchObject({ deleted: true, deletedObjects: 3 });
    for (const id of ids) expect(await objectExists(id)).toBe(false);
    const [project] = await t.database.sql`SELECT deleted_at FROM chessboard.projects WHERE id = ${place.projectId}`;
    expect(project.deleted_at).not.toBeNull();
    expect((await outboxOf(place.projectId)).map((r) => r.topic)).toEqual(['pin.chessboard.project-deleted.v1']);
    expect(await auditOf(place.projectId)).toEqual([{ action: 'chessboard.withdraw-project', actor_id: actor.userId, reason: 'project cancelled' }]);
    // again: already withdrawn, no second audit row
    expect(await caller.withdrawProject({ projectId: place.projectId, reason: 'again' })).toMatchObject({ deleted: false });
    expect(await auditOf(place.projectId)).toHaveLength(1);
  });

  it("another tenant's project or object answers NOT_FOUND at once while another transaction holds its rows' locks (visibility before any lock)", async () => {
    const place = await insertProject(t.database, OTHER_TENANT);
    const [id] = await insertObjects(t.database, place, [{ status: 'Free' }]);
    const { caller } = as('developer_manager', TENANT);
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['withdrawProject', () => caller.withdrawProject({ projectId: place.projectId, reason: 'probe' })],
      ['withdrawObject', () => caller.withdrawObject({ propertyObjectId: id!, reason: 'probe' })],
      ['setObjectHidden', () => caller.setObjectHidden({ propertyObjectId: id!, hidden: true, reason: 'probe' })],
    ];
    for (const [name, call] of calls) {
      const pending: Promise<unknown>[] = [];
      await t.database.sql.begin(async (holder) => {
        // the owner's own work on the project: its object and project rows locked until this transaction ends
        await holder`SELECT 1 FROM chessboard.property_objects WHERE id = ${id!} FOR UPDATE`;
        await holder`SELECT 1 FROM chessboard.projects WHERE id = ${place.projectId} FOR UPDATE`;
        const outcome = call().then(() => 'ok', (e: unknown) => (e instanceof TRPCError ? e.code : String(e)));
        pending.push(outcome);
        let timer: NodeJS.Timeout | undefined;
        // a call queued behind the lock cannot settle before the holder commits, i.e. never within this window
        const waited = new Promise<string>((resolve) => { timer = setTimeout(() => resolve('waited for the lock'), 5_000); });
        expect(await Promise.race([outcome, waited]), name).toBe('NOT_FOUND');
        clearTimeout(timer);
      });
      await Promise.all(pending);
    }
    expect(await objectExists(id!)).toBe(true);
    expect(await auditOf(place.projectId)).toEqual([]);
  });
});
