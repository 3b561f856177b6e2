import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from './schema';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { createContextFor } from '../trpc/context';
import { createCaller } from '../main/app-router';
import { tenantScope, type Actor } from './actor';
import { hashPassword } from './session';

/** A tenant role always has a tenant: the schema refuses such a user, and tenantScope() refuses instead of widening. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

describe('tenant roles have a tenant', () => {
  it.each(['agent', 'developer_manager', 'viewer'] as const)('CHECK ck_users_tenant_role_has_tenant refuses a %s without a tenant', async (role) => {
    const insert = t.database.db.insert(users).values({ id: randomUUID(), email: `${role}-${randomUUID()}@test.local`, displayName: 'x', passwordHash: await hashPassword('x'), role, tenantId: null });
    await expect(insert).rejects.toMatchObject({ cause: { constraint_name: 'ck_users_tenant_role_has_tenant' } });
  });

  it('cross-tenant roles still have no tenant', async () => {
    for (const role of ['pin_manager', 'ops'] as const) {
      await t.database.db.insert(users).values({ id: randomUUID(), email: `${role}-${randomUUID()}@test.local`, displayName: 'x', passwordHash: await hashPassword('x'), role, tenantId: null });
    }
  });

  it('tenantScope() refuses a tenant role without a tenant (FORBIDDEN), it never means "all tenants"', async () => {
    const orphan: Actor = { userId: randomUUID(), role: 'agent', tenantId: null };
    expect(() => tenantScope(orphan)).toThrow(expect.objectContaining({ code: 'AUTH_TENANT_SCOPE_MISSING', kind: 'FORBIDDEN' }));
    expect(tenantScope({ userId: 'x', role: 'pin_manager', tenantId: null })).toBeNull();
    const tenant = randomUUID();
    expect(tenantScope({ userId: 'x', role: 'viewer', tenantId: tenant })).toBe(tenant);
    // through a router: a query scoped by tenant answers FORBIDDEN, not other tenants' rows
    const caller = createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, orphan));
    await expect(caller.chessboard.projects()).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
