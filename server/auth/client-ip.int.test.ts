import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import superjson from 'superjson';
import { afterEach, describe, expect, it } from 'vitest';
import { loginAttempts } from './schema';
import { resetRouteServices, testContextForRouteHandlers } from '../../test/harness/harness';
import { markPeerAddressStamped, PEER_ADDRESS_HEADER } from './client-ip';
import { SIGN_IN_LIMITS } from './sign-in';

/**
 * The per-address sign-in limit through the real route handlers (app/api/auth/sign-in and
 * app/api/trpc, in this process on a test database). Default configuration (no proxy): the counted
 * address is the socket's, written by our web server; X-Forwarded-For is not read, so a client that
 * invents a new one per attempt is still counted as itself.
 */
const t = testContextForRouteHandlers();
afterEach(async () => {
  markPeerAddressStamped(false);
  delete process.env.TRUSTED_PROXY_HOPS;
  await resetRouteServices();
});

async function formAttempt(headers: Record<string, string>): Promise<string> {
  const { POST } = await import('@/app/api/auth/sign-in/route');
  const body = new URLSearchParams({ email: `nobody-${randomUUID()}@test.local`, password: 'wrong-password' });
  const res = await POST(new Request('http://localhost/api/auth/sign-in', {
    method: 'POST',
    headers: { host: 'localhost', origin: 'http://localhost', 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  }));
  expect(res.status).toBe(303);
  return new URL(res.headers.get('location')!, 'http://localhost').searchParams.get('error') ?? '';
}

const forgedXff = () => `198.51.100.${Math.floor(Math.random() * 250)}`;

describe('sign-in limit per client address', () => {
  it('no proxy (default): X-Forwarded-For is ignored, the socket address written by the web server is counted', async () => {
    markPeerAddressStamped();
    const peer = { [PEER_ADDRESS_HEADER]: '203.0.113.50' };
    for (let i = 0; i < SIGN_IN_LIMITS.failuresPerAddress; i++) {
      expect(await formAttempt({ ...peer, 'x-forwarded-for': forgedXff() })).toBe('AUTH_INVALID_CREDENTIALS');
    }
    expect(await formAttempt({ ...peer, 'x-forwarded-for': forgedXff() })).toBe('AUTH_RATE_LIMITED');
    // another client (another socket address) is not affected
    expect(await formAttempt({ [PEER_ADDRESS_HEADER]: '203.0.113.51', 'x-forwarded-for': '203.0.113.50' })).toBe('AUTH_INVALID_CREDENTIALS');
    const ips = await t.database.db.selectDistinct({ ip: loginAttempts.ip }).from(loginAttempts);
    expect(ips.map((r) => r.ip).sort()).toEqual(['203.0.113.50', '203.0.113.51']);
  }, 60_000);

  it('behind one appending proxy (TRUSTED_PROXY_HOPS=1): the entry the proxy appended is counted, not the forged prefix', async () => {
    process.env.TRUSTED_PROXY_HOPS = '1';
    await resetRouteServices();
    const forged = () => `${forgedXff()}, 203.0.113.60`;
    for (let i = 0; i < SIGN_IN_LIMITS.failuresPerAddress; i++) expect(await formAttempt({ 'x-forwarded-for': forged() })).toBe('AUTH_INVALID_CREDENTIALS');
    expect(await formAttempt({ 'x-forwarded-for': forged() })).toBe('AUTH_RATE_LIMITED');
    expect(await formAttempt({ 'x-forwarded-for': '198.51.100.7, 203.0.113.61' })).toBe('AUTH_INVALID_CREDENTIALS');
  }, 60_000);
});

describe('auth.signIn over HTTP', () => {
  it('a batch of sign-ins is refused whole: no argon2 check, no attempt recorded', async () => {
    markPeerAddressStamped();
    const { POST } = await import('@/app/api/trpc/[trpc]/route');
    const n = 5;
    const body = Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), superjson.serialize({ email: `batch-${i}@test.local`, password: 'x' })]));
    const res = await POST(new Request(`http://localhost/api/trpc/${Array(n).fill('auth.signIn').join(',')}?batch=1`, {
      method: 'POST',
      headers: { host: 'localhost', origin: 'http://localhost', 'content-type': 'application/json', [PEER_ADDRESS_HEADER]: '203.0.113.70' },
      body: JSON.stringify(body),
    }));
    const answers = (await res.json()) as Array<{ error?: { json: { data: { domainCode: string } } } }>;
    expect(answers.map((a) => a.error?.json.data.domainCode)).toEqual(Array(n).fill('AUTH_SIGN_IN_BATCHED'));
    expect(await t.database.db.select().from(loginAttempts).where(eq(loginAttempts.ip, '203.0.113.70'))).toEqual([]);
  }, 60_000);
});
