import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { createContextFor } from '../trpc/context';
import { createCaller } from '../main/app-router';
import { isAppError } from '../platform/errors';
import { loginAttempts } from './schema';
import { createSession, resolveSession } from './session';
import { emailHashOf, progressiveDelayMs, SIGN_IN_LIMITS, signIn } from './sign-in';
import { insertTenant, insertUser, TEST_PASSWORD } from '../../test/fixtures/auth.fixtures';
import { eq } from 'drizzle-orm';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

function anonymousCaller(opts: { ip?: string; env?: Partial<TestContext['env']> } = {}) {
  const cookies: string[] = [];
  const ctx = createContextFor({ database: t.database, env: { ...t.env, ...opts.env }, logger: t.logger }, null, {
    ip: opts.ip ?? '10.0.0.1',
    setCookie: (c) => cookies.push(c),
  });
  return { caller: createCaller(ctx), cookies };
}

async function errorOf(p: Promise<unknown>): Promise<{ code: string; domainCode: string | null; message: string }> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TRPCError);
    const err = e as TRPCError;
    return { code: err.code, domainCode: isAppError(err.cause) ? err.cause.code : null, message: err.message };
  }
  throw new Error('expected the call to fail');
}

describe('auth.signIn', () => {
  it('signs in with the right password and sets an HttpOnly SameSite=Lax session cookie that resolves to the user', async () => {
    const tenantId = await insertTenant(t.database.db);
    const user = await insertUser(t.database.db, 'developer_manager', tenantId);
    const { caller, cookies } = anonymousCaller();

    const result = await caller.auth.signIn({ email: user.email.toUpperCase(), password: TEST_PASSWORD });

    expect(result.user).toMatchObject({ id: user.id, role: 'developer_manager', tenantId });
    expect(cookies).toHaveLength(1);
    const cookie = cookies[0];
    expect(cookie).toMatch(/^pin_session=[A-Za-z0-9_-]{40,};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/');
    expect(cookie).not.toContain('Secure'); // NODE_ENV=test
    const token = cookie.split(';')[0].split('=')[1];
    const session = await resolveSession(t.database.db, token);
    expect(session?.actor).toEqual({ userId: user.id, role: 'developer_manager', tenantId });
    // the session expires after SESSION_TTL_HOURS
    const hours = (result.expiresAt.getTime() - Date.now()) / 3600_000;
    expect(hours).toBeGreaterThan(t.env.SESSION_TTL_HOURS - 0.1);
    expect(hours).toBeLessThanOrEqual(t.env.SESSION_TTL_HOURS);
  });

  it('marks the cookie Secure in production', async () => {
    const user = await insertUser(t.database.db, 'ops', null);
    const { caller, cookies } = anonymousCaller({ env: { NODE_ENV: 'production' } });
    await caller.auth.signIn({ email: user.email, password: TEST_PASSWORD });
    expect(cookies[0]).toContain('; Secure');
  });

  it('answers a wrong password and an unknown e-mail with the same error (does not reveal whether the account exists)', async () => {
    const user = await insertUser(t.database.db, 'agent', await insertTenant(t.database.db));
    const wrongPassword = await errorOf(anonymousCaller({ ip: '10.0.1.1' }).caller.auth.signIn({ email: user.email, password: 'wrong-password' }));
    const unknownEmail = await errorOf(anonymousCaller({ ip: '10.0.1.2' }).caller.auth.signIn({ email: 'nobody@test.local', password: 'wrong-password' }));

    expect(wrongPassword).toEqual({ code: 'UNAUTHORIZED', domainCode: 'AUTH_INVALID_CREDENTIALS', message: wrongPassword.message });
    expect(unknownEmail).toEqual(wrongPassword);
    // both attempts are recorded as failures (they count towards the limits alike)
    const rows = await t.database.db.select().from(loginAttempts).where(eq(loginAttempts.emailHash, emailHashOf('nobody@test.local')));
    expect(rows.map((r) => r.success)).toEqual([false]);
  });

  it('refuses one account from one address after 5 failures in 15 minutes, even with the right password; the real user from their own address is let in', async () => {
    const user = await insertUser(t.database.db, 'viewer', await insertTenant(t.database.db));
    const start = new Date('2030-01-01T10:00:00Z');
    const at = (s: number) => new Date(start.getTime() + s * 1000);
    const attacker = '10.1.0.66';
    for (let i = 0; i < SIGN_IN_LIMITS.failuresPerAccountAddress; i++) {
      // a minute apart: past every progressive delay
      await expect(signIn(t.database.db, { email: user.email, password: 'nope', ip: attacker, ttlHours: 1, now: at(i * 60) }))
        .rejects.toMatchObject({ code: 'AUTH_INVALID_CREDENTIALS' });
    }
    const blocked = signIn(t.database.db, { email: user.email, password: TEST_PASSWORD, ip: attacker, ttlHours: 1, now: at(600) });
    await expect(blocked).rejects.toMatchObject({ code: 'AUTH_RATE_LIMITED', kind: 'TOO_MANY_REQUESTS' });
    // not a lock-out of the account: the real user, from their own address, at the same moment
    const own = await signIn(t.database.db, { email: user.email, password: TEST_PASSWORD, ip: '10.1.1.1', ttlHours: 1, now: at(600) });
    expect(own.user.id).toBe(user.id);
    // the attacker's address again after the window moved past its failures
    const later = at(SIGN_IN_LIMITS.windowMs / 1000 + 5 * 60);
    await expect(signIn(t.database.db, { email: user.email, password: 'nope', ip: attacker, ttlHours: 1, now: later }))
      .rejects.toMatchObject({ code: 'AUTH_INVALID_CREDENTIALS' });
  });

  it('progressive delay per account + address: from the 2nd failure on the next attempt waits 2^(n-1) s', async () => {
    const user = await insertUser(t.database.db, 'agent', await insertTenant(t.database.db));
    const start = new Date('2030-01-02T10:00:00Z');
    const at = (ms: number) => new Date(start.getTime() + ms);
    const attempt = (ms: number, password = 'nope') => signIn(t.database.db, { email: user.email, password, ip: '10.1.2.1', ttlHours: 1, now: at(ms) });
    await expect(attempt(0)).rejects.toMatchObject({ code: 'AUTH_INVALID_CREDENTIALS' });
    await expect(attempt(10)).rejects.toMatchObject({ code: 'AUTH_INVALID_CREDENTIALS' }); // one failure: no delay
    // two failures: 2 s from the last one, refused without a check (the right password too) and not recorded
    await expect(attempt(1_000, TEST_PASSWORD)).rejects.toMatchObject({ code: 'AUTH_RATE_LIMITED', details: { retryAfterSeconds: 2 } });
    await expect(attempt(2_010)).rejects.toMatchObject({ code: 'AUTH_INVALID_CREDENTIALS' });
    await expect(attempt(5_000)).rejects.toMatchObject({ code: 'AUTH_RATE_LIMITED', details: { retryAfterSeconds: 2 } }); // 4 s after 3 failures
    expect(progressiveDelayMs(3)).toBe(4_000);
    const ok = await attempt(6_010, TEST_PASSWORD);
    expect(ok.user.id).toBe(user.id);
    const rows = await t.database.db.select().from(loginAttempts).where(eq(loginAttempts.emailHash, emailHashOf(user.email)));
    expect(rows.map((r) => r.success).sort()).toEqual([false, false, false, true]);
    // the success starts the count afresh: a typo right after it waits for nothing
    await expect(attempt(6_020)).rejects.toMatchObject({ code: 'AUTH_INVALID_CREDENTIALS' });
  });

  it('answers TOO_MANY_REQUESTS with domainCode AUTH_RATE_LIMITED through the router', async () => {
    const user = await insertUser(t.database.db, 'agent', await insertTenant(t.database.db));
    for (let i = 0; i < SIGN_IN_LIMITS.delayAfterFailures; i++) {
      await errorOf(anonymousCaller({ ip: '10.2.0.1' }).caller.auth.signIn({ email: user.email, password: 'nope' }));
    }
    const err = await errorOf(anonymousCaller({ ip: '10.2.0.1' }).caller.auth.signIn({ email: user.email, password: TEST_PASSWORD }));
    expect(err).toMatchObject({ code: 'TOO_MANY_REQUESTS', domainCode: 'AUTH_RATE_LIMITED' });
  });

  it('rate-limits an address after 20 failures in 15 minutes across accounts; another address is not affected', async () => {
    const user = await insertUser(t.database.db, 'agent', await insertTenant(t.database.db));
    const start = new Date('2030-03-01T10:00:00Z');
    const ip = '10.9.9.9';
    for (let i = 0; i < SIGN_IN_LIMITS.failuresPerAddress; i++) {
      await expect(signIn(t.database.db, { email: `guess-${i}@test.local`, password: 'x', ip, ttlHours: 1, now: new Date(start.getTime() + i * 1000) }))
        .rejects.toMatchObject({ code: 'AUTH_INVALID_CREDENTIALS' });
    }
    await expect(signIn(t.database.db, { email: user.email, password: TEST_PASSWORD, ip, ttlHours: 1, now: new Date(start.getTime() + 30_000) }))
      .rejects.toMatchObject({ code: 'AUTH_RATE_LIMITED' });
    await expect(signIn(t.database.db, { email: user.email, password: TEST_PASSWORD, ip: '10.9.9.10', ttlHours: 1, now: new Date(start.getTime() + 30_000) }))
      .resolves.toBeTruthy();
  });

  it('attempts are reserved before the password check: 30 parallel guesses from one address get exactly 20 checks', async () => {
    const ip = '10.9.8.1';
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) =>
      signIn(t.database.db, { email: `spray-${i}@test.local`, password: 'x', ip, ttlHours: 1 })));
    const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'ok'));
    expect(codes.filter((c) => c === 'AUTH_INVALID_CREDENTIALS')).toHaveLength(SIGN_IN_LIMITS.failuresPerAddress);
    expect(codes.filter((c) => c === 'AUTH_RATE_LIMITED')).toHaveLength(30 - SIGN_IN_LIMITS.failuresPerAddress);
    const rows = await t.database.db.select().from(loginAttempts).where(eq(loginAttempts.ip, ip));
    expect(rows).toHaveLength(SIGN_IN_LIMITS.failuresPerAddress);
  });

  it('auth.signIn refuses to ride in a batch: nothing is checked or recorded', async () => {
    const user = await insertUser(t.database.db, 'agent', await insertTenant(t.database.db));
    const ctx = createContextFor({ database: t.database, env: t.env, logger: t.logger }, null, { ip: '10.9.7.1', batched: true });
    const err = await errorOf(createCaller(ctx).auth.signIn({ email: user.email, password: TEST_PASSWORD }));
    expect(err).toMatchObject({ code: 'BAD_REQUEST', domainCode: 'AUTH_SIGN_IN_BATCHED' });
    expect(await t.database.db.select().from(loginAttempts).where(eq(loginAttempts.ip, '10.9.7.1'))).toEqual([]);
  });

  it('rejects malformed input with BAD_REQUEST', async () => {
    const err = await errorOf(anonymousCaller().caller.auth.signIn({ email: '', password: '' }));
    expect(err.code).toBe('BAD_REQUEST');
  });
});

describe('sessions', () => {
  it('an expired session resolves to nobody and the caller gets UNAUTHORIZED', async () => {
    const user = await insertUser(t.database.db, 'developer_manager', await insertTenant(t.database.db));
    const ttl = t.env.SESSION_TTL_HOURS;
    const { token } = await createSession(t.database.db, user.id, ttl, new Date(Date.now() - (ttl + 1) * 3600_000));
    expect(await resolveSession(t.database.db, token)).toBeNull();
    // still valid one minute before its expiry
    const { token: fresh, expiresAt } = await createSession(t.database.db, user.id, ttl);
    expect(await resolveSession(t.database.db, fresh, new Date(expiresAt.getTime() - 60_000))).not.toBeNull();
    expect(await resolveSession(t.database.db, fresh, new Date(expiresAt.getTime() + 1))).toBeNull();

    const err = await errorOf(anonymousCaller().caller.auth.me());
    expect(err.code).toBe('UNAUTHORIZED');
  });

  it('me returns the signed-in user; signOut deletes the session and clears the cookie', async () => {
    const tenantId = await insertTenant(t.database.db, 'Tenant Me');
    const user = await insertUser(t.database.db, 'agent', tenantId);
    const { token } = await createSession(t.database.db, user.id, 1);
    const session = (await resolveSession(t.database.db, token))!;
    const cookies: string[] = [];
    const caller = createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, session.actor, {
      sessionId: session.sessionId,
      setCookie: (c) => cookies.push(c),
    }));
    expect(await caller.auth.me()).toMatchObject({ id: user.id, email: user.email, role: 'agent', tenantId, tenantName: 'Tenant Me' });

    await caller.auth.signOut();
    expect(cookies[0]).toMatch(/^pin_session=; .*Max-Age=0/);
    expect(cookies[0]).toContain('HttpOnly');
    expect(await resolveSession(t.database.db, token)).toBeNull();
  });
});
