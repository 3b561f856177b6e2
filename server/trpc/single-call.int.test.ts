import { randomUUID } from 'node:crypto';
import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import { insertTenant, insertUser, TEST_PASSWORD } from '../../test/fixtures/auth.fixtures';
import { testContextForRouteHandlers } from '../../test/harness/harness';
import { handleTrpcRequestWithBodyRead } from './http-handler';
import { answerSingleCall, singleCallMutation, type PlainAnswer } from './single-call';

/**
 * The single-call path against the library's own behaviour: the same request answered by tRPC's fetch
 * adapter (the route's handler, http-handler.ts) and by single-call.ts must give the same status,
 * headers, cookies and body — a success with a cookie and a Date, domain, auth, role and validation
 * errors, unreadable bodies, a cross-origin POST.
 */
const t = testContextForRouteHandlers();
const BASE = 'http://console.test';

interface Sent { path: string; body: string | Buffer; headers?: Record<string, string> }

const headersOf = (sent: Sent) => ({ 'content-type': 'application/json', host: 'console.test', ...sent.headers });

async function throughAdapter(sent: Sent): Promise<PlainAnswer> {
  const request = new Request(`${BASE}/api/trpc/${sent.path}`, { method: 'POST', headers: headersOf(sent), body: new Uint8Array(Buffer.from(sent.body)) });
  const response = await handleTrpcRequestWithBodyRead(request);
  const headers: Array<[string, string]> = [];
  for (const [name, value] of response.headers) if (name !== 'set-cookie') headers.push([name, value]);
  return { status: response.status, headers, cookies: response.headers.getSetCookie(), body: Buffer.from(await response.arrayBuffer()) };
}

async function throughSingleCall(sent: Sent): Promise<PlainAnswer> {
  const headers = new Headers(headersOf(sent));
  const path = singleCallMutation('POST', `/api/trpc/${sent.path}`, headers);
  expect(path, `${sent.path} is answered by the single-call path`).toBe(sent.path);
  return answerSingleCall({ method: 'POST', url: `${BASE}/api/trpc/${sent.path}`, headers }, path!, Buffer.from(sent.body));
}

/** Both answers, as text; `mask` blanks what differs between two calls by nature (a session's expiry, its token). */
async function both(sent: Sent, mask: (body: string) => string = (b) => b) {
  const [adapter, single] = [await throughAdapter(sent), await throughSingleCall(sent)];
  const view = (a: PlainAnswer) => ({
    status: a.status, headers: a.headers, body: mask(a.body.toString()),
    cookies: a.cookies.map((c) => c.replace(/=[^;]*/, '=…').replace(/Expires=[^;]*/i, 'Expires=…')),
  });
  return { adapter: view(adapter), single: view(single) };
}

const json = (input: unknown) => JSON.stringify(superjson.serialize(input));

async function signedIn(role: Parameters<typeof insertUser>[1] = 'pin_manager') {
  const tenant = await insertTenant(t.database.db);
  const user = await insertUser(t.database.db, role, role === 'pin_manager' || role === 'ops' ? null : tenant);
  const answer = await throughAdapter({ path: 'auth.signIn', body: json({ email: user.email, password: TEST_PASSWORD }) });
  expect(answer.status).toBe(200);
  return { user, cookie: answer.cookies[0]!.split(';')[0]! };
}

describe('single-call path: the answers of tRPC\'s fetch adapter', () => {
  it('a success that sets a cookie and carries a Date (auth.signIn), and one that clears it (auth.signOut)', async () => {
    const tenant = await insertTenant(t.database.db);
    const user = await insertUser(t.database.db, 'developer_manager', tenant);
    const signIn = await both({ path: 'auth.signIn', body: json({ email: user.email, password: TEST_PASSWORD }) },
      (b) => b.replace(/"expiresAt":"[^"]+"/, '"expiresAt":…'));
    expect(signIn.single).toEqual(signIn.adapter);
    expect(signIn.single.status).toBe(200);
    expect(signIn.single.body).toMatch(/"meta":\{"values":\{[^}]*"expiresAt":\["Date"\]/);
    expect(signIn.single.cookies).toHaveLength(1);

    const a = await signedIn();
    const b = await signedIn();
    const [outA, outB] = [await throughAdapter({ path: 'auth.signOut', body: '', headers: { cookie: a.cookie } }), await throughSingleCall({ path: 'auth.signOut', body: '', headers: { cookie: b.cookie } })];
    expect({ ...outB, body: outB.body.toString() }).toEqual({ ...outA, body: outA.body.toString() });
  });

  it('domain, auth, role and validation errors, with the same status and shape', async () => {
    const { cookie } = await signedIn();
    const viewer = await signedIn('viewer');
    const confirm = { bookingId: randomUUID(), expectedVersion: 1 };
    const cases: Sent[] = [
      { path: 'booking.confirm', body: json(confirm), headers: { cookie } }, // no such booking
      { path: 'booking.confirm', body: json(confirm) }, // not signed in
      { path: 'booking.confirm', body: json(confirm), headers: { cookie: viewer.cookie } }, // a role that may not
      { path: 'booking.confirm', body: json({ bookingId: 'not-a-uuid', extra: 1 }), headers: { cookie } }, // invalid fields
      { path: 'auth.signIn', body: json({ email: 'nobody@test.local', password: 'wrong password here' }) }, // refused sign-in
    ];
    const statuses: number[] = [];
    for (const sent of cases) {
      const { adapter, single } = await both(sent);
      expect(single, `${sent.path} ${sent.body.toString()}`).toEqual(adapter);
      statuses.push(single.status);
    }
    expect(statuses).toEqual([404, 401, 403, 400, 401]);
  });

  it('bodies that cannot be read as input: not JSON, empty, null, a BOM before JSON, not superjson', async () => {
    const { cookie } = await signedIn();
    const bodies = ['{', '', 'null', `\uFEFF${json({ bookingId: randomUUID(), expectedVersion: 1 })}`, '{"json":{"bookingId":1},"meta":{"values":{"bookingId":["bogus"]}}}', '[1,2]'];
    for (const body of bodies) {
      const { adapter, single } = await both({ path: 'booking.confirm', body, headers: { cookie } });
      expect(single, JSON.stringify(body)).toEqual(adapter);
      expect(single.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
    }
  });

  it('a cross-origin POST is refused before anything runs', async () => {
    const { cookie } = await signedIn();
    const { adapter, single } = await both({ path: 'booking.confirm', body: json({ bookingId: randomUUID(), expectedVersion: 1 }), headers: { cookie, origin: 'http://evil.test' } });
    expect(single).toEqual(adapter);
    expect(single.status).toBe(403);
  });

  it('takes only a single JSON mutation without a query string; everything else is the fetch adapter\'s', () => {
    const h = (headers: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json', ...headers });
    expect(singleCallMutation('POST', '/api/trpc/booking.create', h())).toBe('booking.create');
    expect(singleCallMutation('POST', '/api/trpc/booking.create', h({ 'content-type': 'Application/JSON; charset=utf-8' }))).toBe('booking.create');
    const refused: Array<[string, string, Headers]> = [
      ['GET', '/api/trpc/booking.create', h()],
      ['POST', '/api/trpc/booking.create?batch=1', h()],
      ['POST', '/api/trpc/booking.create,booking.confirm?batch=1', h()],
      ['POST', '/api/trpc/booking.create', h({ 'content-type': 'text/plain' })],
      ['POST', '/api/trpc/booking.create', new Headers()],
      ['POST', '/api/trpc/booking.create', h({ 'trpc-accept': 'application/jsonl' })],
      ['POST', '/api/trpc/booking.create', h({ accept: 'application/jsonl' })],
      ['POST', '/api/trpc/auth.me', h()], // a query
      ['POST', '/api/trpc/no.such', h()],
      ['POST', '/api/trpc/booking%2Ecreate', h()],
    ];
    for (const [method, url, headers] of refused) expect(singleCallMutation(method, url, headers), `${method} ${url}`).toBeNull();
  });
});
