import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// count the argon2 verifications the sign-in performs (the real implementation still runs)
const verifyCalls = vi.hoisted(() => ({ hashes: [] as string[] }));
vi.mock('@node-rs/argon2', async (importOriginal) => {
  const real = await importOriginal<typeof import('@node-rs/argon2')>();
  return {
    ...real,
    verify: (hashed: string, password: string) => {
      verifyCalls.hashes.push(hashed);
      return real.verify(hashed, password);
    },
  };
});

const { createTestContext } = await import('../../test/harness/harness');
const { signIn } = await import('./sign-in');
const { insertTenant, insertUser } = await import('../../test/fixtures/auth.fixtures');

let t: Awaited<ReturnType<typeof createTestContext>>;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

describe('sign-in timing', () => {
  it('an unknown e-mail costs one argon2id verification against a dummy hash, like a wrong password does', async () => {
    const user = await insertUser(t.database.db, 'agent', await insertTenant(t.database.db));
    verifyCalls.hashes.length = 0;
    await expect(signIn(t.database.db, { email: user.email, password: 'wrong', ip: '10.50.0.1', ttlHours: 1 })).rejects.toMatchObject({ code: 'AUTH_INVALID_CREDENTIALS' });
    await expect(signIn(t.database.db, { email: 'ghost@test.local', password: 'wrong', ip: '10.50.0.2', ttlHours: 1 })).rejects.toMatchObject({ code: 'AUTH_INVALID_CREDENTIALS' });
    expect(verifyCalls.hashes).toHaveLength(2);
    // both are argon2id hashes with the same cost parameters
    const params = (h: string) => h.split('$').slice(1, 4).join('$');
    expect(verifyCalls.hashes[0]).toMatch(/^\$argon2id\$/);
    expect(params(verifyCalls.hashes[1])).toBe(params(verifyCalls.hashes[0]));
    expect(verifyCalls.hashes[1]).not.toBe(verifyCalls.hashes[0]);
  });
});
