import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Actor } from '../auth/actor';
import { createContextFor } from '../trpc/context';
import { createCallerFactory } from '../trpc/init';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { catalogRouter } from './router';
import { DAY_MS, insertObjectCard, insertProjectCard } from '../../test/fixtures/catalog.fixtures';

let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });
beforeEach(async () => { await t.database.sql`TRUNCATE catalog.property_object_cards, catalog.project_cards`; });

const callerAs = (actor: Actor | null) => createCallerFactory(catalogRouter)(createContextFor({ database: t.database, env: t.env, logger: t.logger }, actor));
const anonymous = () => callerAs(null);
const as = (role: Actor['role']) => callerAs({ userId: randomUUID(), role, tenantId: role === 'ops' || role === 'pin_manager' ? null : randomUUID() });

async function errorOf(p: Promise<unknown>): Promise<TRPCError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

describe('public card reads', () => {
  it('cardById answers a Published card with its Published project card name, without a session', async () => {
    const projectId = await insertProjectCard(t.database, { name: 'Northern Lights' });
    const id = await insertObjectCard(t.database, { projectId, saleStatus: 'Reserved' });
    expect(await anonymous().cardById({ id })).toMatchObject({ id, projectId, saleStatus: 'Reserved', projectName: 'Northern Lights', area: 54.5, price: 9_500_000 });
  });

  it.each(['Delisted', 'Hidden'])('cardById answers NOT_FOUND (CATALOG_CARD_NOT_FOUND) for a %s card', async (status) => {
    const id = await insertObjectCard(t.database, { status });
    const err = await errorOf(anonymous().cardById({ id }));
    expect(err.code).toBe('NOT_FOUND');
    expect((err.cause as { code?: string }).code).toBe('CATALOG_CARD_NOT_FOUND');
  });

  it('cardById answers NOT_FOUND for an id that is gone, and BAD_REQUEST for a malformed id', async () => {
    expect((await errorOf(anonymous().cardById({ id: randomUUID() }))).code).toBe('NOT_FOUND');
    expect((await errorOf(anonymous().cardById({ id: 'not-a-uuid' }))).code).toBe('BAD_REQUEST');
  });

  it('projectCardById answers a Published project card and NOT_FOUND for a Delisted or missing one', async () => {
    const live = await insertProjectCard(t.database, { name: 'Harbour' });
    const delisted = await insertProjectCard(t.database, { status: 'Delisted' });
    expect(await anonymous().projectCardById({ id: live })).toMatchObject({ id: live, name: 'Harbour', city: 'Moscow' });
    for (const id of [delisted, randomUUID()]) {
      const err = await errorOf(anonymous().projectCardById({ id }));
      expect(err.code).toBe('NOT_FOUND');
      expect((err.cause as { code?: string }).code).toBe('CATALOG_CARD_NOT_FOUND');
    }
  });
});

describe('ops reads of the Delisted backlog', () => {
  const seed = async () => {
    const oldest = new Date(Date.now() - 45 * DAY_MS);
    const blockedProject = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 40 * DAY_MS) });
    await insertObjectCard(t.database, { projectId: blockedProject, status: 'Delisted', updatedAt: new Date(Date.now() - 5 * DAY_MS) });
    const removableProject = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 35 * DAY_MS) });
    await insertObjectCard(t.database, { projectId: removableProject, status: 'Delisted', updatedAt: oldest });
    await insertObjectCard(t.database, { status: 'Delisted', updatedAt: new Date(Date.now() - 31 * DAY_MS) });
    await insertObjectCard(t.database, { status: 'Published', updatedAt: oldest });
    return { oldest };
  };

  it('delistedBacklog counts all and past-cutoff Delisted cards per kind with the oldest updated_at', async () => {
    const { oldest } = await seed();
    const b = await as('ops').delistedBacklog();
    expect(b.propertyObjects).toEqual({ all: 3, pastCutoff: 2, oldestUpdatedAt: oldest });
    expect(b.projects).toMatchObject({ all: 2, pastCutoff: 2 });
    expect(Math.abs(b.cutoff.getTime() - (Date.now() - 30 * DAY_MS))).toBeLessThan(60_000);
  });

  it('nextRetentionCandidates: what a run now would remove; a project with a remaining object card waits', async () => {
    const { oldest } = await seed();
    const c = await as('pin_manager').nextRetentionCandidates();
    expect(c.propertyObjects).toEqual({ count: 2, oldestUpdatedAt: oldest });
    expect(c.projects).toMatchObject({ count: 1, waitingForObjectCards: 1 });
    expect(c).toMatchObject({ estimatedBatches: 2, fitsInOneRun: true });
  });

  it('the backlog reads are for ops, pin_manager and viewer only', async () => {
    expect(await as('viewer').delistedBacklog()).toBeDefined();
    expect((await errorOf(anonymous().delistedBacklog())).code).toBe('UNAUTHORIZED');
    expect((await errorOf(as('agent').nextRetentionCandidates())).code).toBe('FORBIDDEN');
    expect((await errorOf(as('developer_manager').delistedBacklog())).code).toBe('FORBIDDEN');
  });
});
