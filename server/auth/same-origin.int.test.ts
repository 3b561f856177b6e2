import superjson from 'superjson';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEnv } from '../main/env';
import { EnvError } from '../platform/env';
import { resetRouteServices, testContextForRouteHandlers } from '../../test/harness/harness';
import { insertTenant, insertUser, TEST_PASSWORD } from '../../test/fixtures/auth.fixtures';
import { isCrossOrigin } from './same-origin';

/**
 * The CSRF check through the real route handlers (tRPC mutations and the no-JavaScript sign-in form):
 * X-Forwarded-Host / X-Forwarded-Proto are believed only with TRUST_PROXY=1, and PUBLIC_ORIGIN, when set,
 * is the whole list of origins a mutation may come from.
 */
const t = testContextForRouteHandlers();
afterEach(async () => {
  delete process.env.TRUST_PROXY;
  delete process.env.PUBLIC_ORIGIN;
  await resetRouteServices();
});

const EVIL = 'http://evil.example';
async function configure(vars: Record<string, string>) {
  Object.assign(process.env, vars);
  await resetRouteServices();
}

/** One sign-in through each route with these headers: the status of the tRPC call and of the form. */
async function attempts(headers: Record<string, string>): Promise<{ trpc: number; form: number }> {
  const { POST } = await import('@/app/api/trpc/[trpc]/route');
  const { POST: formSignIn } = await import('@/app/api/auth/sign-in/route');
  const user = await insertUser(t.database.db, 'viewer', await insertTenant(t.database.db));
  const trpc = await POST(new Request('http://localhost/api/trpc/auth.signIn', {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(superjson.serialize({ email: user.email, password: TEST_PASSWORD })),
  }));
  const form = await formSignIn(new Request('http://localhost/api/auth/sign-in', {
    method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: user.email, password: TEST_PASSWORD }).toString(),
  }));
  if (form.status === 303) expect(form.headers.get('location')).toBe('/chessboard');
  return { trpc: trpc.status, form: form.status };
}

const REFUSED = { trpc: 403, form: 403 };
const SIGNED_IN = { trpc: 200, form: 303 };

describe('same-origin check of mutations and the sign-in form', () => {
  it('default (no proxy): a foreign Origin is 403 whatever X-Forwarded-Host / -Proto say; our own Host passes', async () => {
    expect(await attempts({ host: 'console.local', origin: EVIL, 'x-forwarded-host': 'evil.example' })).toEqual(REFUSED);
    expect(await attempts({ host: 'console.local', origin: EVIL, 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' })).toEqual(REFUSED);
    expect(await attempts({ host: 'console.local', origin: EVIL, 'x-forwarded-host': 'evil.example, console.local' })).toEqual(REFUSED);
    expect(await attempts({ host: 'console.local', origin: 'null' })).toEqual(REFUSED);
    expect(await attempts({ host: 'console.local', origin: 'http://console.local' })).toEqual(SIGNED_IN);
    // the forwarded host is not read: a request of our own origin passes whatever it says
    expect(await attempts({ host: 'console.local', origin: 'http://console.local', 'x-forwarded-host': 'evil.example' })).toEqual(SIGNED_IN);
  }, 60_000);

  it('TRUST_PROXY=1: the host and scheme the proxy forwarded are the origin', async () => {
    await configure({ TRUST_PROXY: '1' });
    const proxied = { host: 'web:3000', 'x-forwarded-host': 'console.pin.example', 'x-forwarded-proto': 'https' };
    expect(await attempts({ ...proxied, origin: 'https://console.pin.example' })).toEqual(SIGNED_IN);
    expect(await attempts({ ...proxied, origin: EVIL })).toEqual(REFUSED);
    // the same host over the other scheme is another origin
    expect(await attempts({ ...proxied, origin: 'http://console.pin.example' })).toEqual(REFUSED);
  }, 60_000);

  it('PUBLIC_ORIGIN: exactly the listed origins, Host and forwarded headers not read (even with TRUST_PROXY=1)', async () => {
    await configure({ PUBLIC_ORIGIN: 'https://console.pin.example, https://backup.pin.example:8443', TRUST_PROXY: '1' });
    expect(await attempts({ host: 'web:3000', origin: 'https://console.pin.example' })).toEqual(SIGNED_IN);
    expect(await attempts({ host: 'web:3000', origin: 'https://backup.pin.example:8443' })).toEqual(SIGNED_IN);
    expect(await attempts({ host: 'evil.example', origin: EVIL, 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' })).toEqual(REFUSED);
    expect(await attempts({ host: 'console.pin.example', origin: 'http://console.pin.example' })).toEqual(REFUSED);
  }, 60_000);

  it('the settings are validated: TRUST_PROXY is 0 or 1, PUBLIC_ORIGIN a list of origins without a path', () => {
    const base = { DATABASE_URL: 'postgres://x@h:1/d', KAFKA_BROKERS: 'h:1' };
    expect(parseEnv({ ...base, PUBLIC_ORIGIN: 'HTTPS://Console.Pin.Example , http://localhost:3000' }).PUBLIC_ORIGIN).toEqual(['https://console.pin.example', 'http://localhost:3000']);
    expect(parseEnv(base)).toMatchObject({ TRUST_PROXY: '0', PUBLIC_ORIGIN: [] });
    for (const bad of [{ TRUST_PROXY: 'yes' }, { PUBLIC_ORIGIN: 'console.pin.example' }, { PUBLIC_ORIGIN: 'https://console.pin.example/app' }, { PUBLIC_ORIGIN: 'ftp://x.example' }]) {
      expect(() => parseEnv({ ...base, ...bad }), JSON.stringify(bad)).toThrow(EnvError);
    }
    // no Origin: browsers send one on every cross-origin POST, so a request without it is not a cross-site form
    expect(isCrossOrigin(new Request('http://x/', { method: 'POST', headers: { host: 'x' } }), { TRUST_PROXY: '0', PUBLIC_ORIGIN: [] })).toBe(false);
  });
});
