import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, routeHandlersOn, type TestContext } from '../testing/harness';
import { SIGN_IN_LIMITS } from './sign-in';

/**
 * The per-IP sign-in limit through the sign-in route (app/api/auth/sign-in, in this process on a test
 * database): a client that writes a new address into X-Forwarded-For on every attempt is still counted
 * by the address the proxy appended, and another client behind the same proxy is not affected.
 */
let t: TestContext;
let restore: (() => Promise<void>) | undefined;

beforeAll(async () => {
  t = await createTestContext();
  restore = routeHandlersOn(t);
});
afterAll(async () => {
  await restore?.();
  await t?.close();
});

async function attempt(forwardedFor: string): Promise<string> {
  const { POST } = await import('@/app/api/auth/sign-in/route');
  const body = new URLSearchParams({ email: `nobody-${randomUUID()}@test.local`, password: 'wrong-password' });
  const res = await POST(new Request('http://localhost/api/auth/sign-in', {
    method: 'POST',
    headers: { host: 'localhost', origin: 'http://localhost', 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forwardedFor },
    body,
  }));
  expect(res.status).toBe(303);
  return new URL(res.headers.get('location')!, 'http://localhost').searchParams.get('error') ?? '';
}

describe('sign-in limit per client address', () => {
  it('a forged X-Forwarded-For prefix does not reset the per-IP count; the proxy-appended address is counted', async () => {
    const forged = () => `198.51.100.${Math.floor(Math.random() * 250)}, 203.0.113.50`;
    for (let i = 0; i < SIGN_IN_LIMITS.failuresPerIp; i++) expect(await attempt(forged())).toBe('AUTH_INVALID_CREDENTIALS');
    expect(await attempt(forged())).toBe('AUTH_RATE_LIMITED');
    expect(await attempt('203.0.113.50')).toBe('AUTH_RATE_LIMITED');
    // another client behind the same proxy
    expect(await attempt('198.51.100.7, 203.0.113.51')).toBe('AUTH_INVALID_CREDENTIALS');
  }, 60_000);
});
