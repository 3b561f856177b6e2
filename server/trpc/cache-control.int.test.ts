import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import { insertTenant, insertUser, TEST_PASSWORD } from '../../test/fixtures/auth.fixtures';
import { testContextForRouteHandlers } from '../../test/harness/harness';

/** Every answer of the API carries `Cache-Control: no-store` (answers hold user and tenant data). */
const t = testContextForRouteHandlers();

const origin = { host: 'localhost', origin: 'http://localhost' };

describe('Cache-Control on tRPC answers', () => {
  it('a signed-in GET with tenant data, a POST, an error and a refused request are all no-store', async () => {
    const { GET, POST } = await import('@/app/api/trpc/[trpc]/route');
    const user = await insertUser(t.database.db, 'viewer', await insertTenant(t.database.db));
    const signIn = await POST(new Request('http://localhost/api/trpc/auth.signIn', {
      method: 'POST', headers: { ...origin, 'content-type': 'application/json' },
      body: JSON.stringify(superjson.serialize({ email: user.email, password: TEST_PASSWORD })),
    }));
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get('cache-control')).toBe('no-store');
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const me = await GET(new Request('http://localhost/api/trpc/auth.me,chessboard.projects?batch=1&input=%7B%7D', { headers: { ...origin, cookie } }));
    expect(me.status).toBe(200);
    expect(me.headers.get('cache-control')).toBe('no-store');
    const anonymous = await GET(new Request('http://localhost/api/trpc/auth.me', { headers: origin }));
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('cache-control')).toBe('no-store');
    const crossOrigin = await POST(new Request('http://localhost/api/trpc/auth.signOut', { method: 'POST', headers: { host: 'localhost', origin: 'https://evil.example' } }));
    expect(crossOrigin.status).toBe(403);
    expect(crossOrigin.headers.get('cache-control')).toBe('no-store');
  });

  it('/api/events (signed in and anonymous) and every answer of /api/auth/sign-in are no-store', async () => {
    const { GET: events } = await import('@/app/api/events/route');
    const { POST: formSignIn } = await import('@/app/api/auth/sign-in/route');
    const user = await insertUser(t.database.db, 'viewer', await insertTenant(t.database.db));
    const form = (email: string, password: string, headers: Record<string, string> = origin) => formSignIn(new Request('http://localhost/api/auth/sign-in', {
      method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email, password }).toString(),
    }));
    const signedIn = await form(user.email, TEST_PASSWORD);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('cache-control')).toBe('no-store');
    const wrong = await form(user.email, 'wrong password');
    expect(wrong.status).toBe(303);
    expect(wrong.headers.get('cache-control')).toBe('no-store');
    const crossOrigin = await form(user.email, TEST_PASSWORD, { host: 'localhost', origin: 'https://evil.example' });
    expect(crossOrigin.status).toBe(403);
    expect(crossOrigin.headers.get('cache-control')).toBe('no-store');

    const anonymous = await events(new Request('http://localhost/api/events', { headers: origin }));
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('cache-control')).toBe('no-store');
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const aborted = new AbortController();
    const stream = await events(new Request('http://localhost/api/events', { headers: { ...origin, cookie }, signal: aborted.signal }));
    expect(stream.status).toBe(200);
    expect(stream.headers.get('cache-control')).toMatch(/^no-store\b/);
    await stream.body!.cancel();
    aborted.abort();
  });
});
