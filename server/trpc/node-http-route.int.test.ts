import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, SESSION_COOKIE } from '../auth/session';
import { insertTenant, insertTenantWorld, insertUser, TEST_PASSWORD } from '../../test/fixtures/auth.fixtures';
import { insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { testContextForRouteHandlers } from '../../test/harness/harness';
import { handleTrpcRequest } from './http-handler';
import { isTrpcPath, serveTrpc } from './node-http';

/**
 * The web server answers /api/trpc itself (node-http.ts) and the Next.js route (app/api/trpc/[trpc])
 * answers it under `next start`: for the same request both must answer the same — status, body, the
 * route's headers, cookies — for a success, every kind of error, a cookie set by the procedure and a
 * command that succeeds.
 */
const t = testContextForRouteHandlers();
let base = '';
let server: http.Server;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (isTrpcPath(req.url)) void serveTrpc(req, res, base);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type Exchange = { method: 'GET' | 'POST'; path: string; query?: string; headers?: Record<string, string>; body?: string };
interface Answer { status: number; body: string; headers: Record<string, string | undefined>; cookies: string[] }
/** the route's own headers: what the web server adds around them (security headers, CSP, length, encoding) aside */
const ROUTE_HEADERS = ['content-type', 'cache-control', 'retry-after'];

const headersOf = (e: Exchange) => ({ host: new URL(base).host, ...(e.method === 'POST' ? { 'content-type': 'application/json', origin: base } : {}), ...e.headers });
const urlOf = (e: Exchange) => `/api/trpc/${e.path}${e.query ? `?${e.query}` : ''}`;

function viaWebServer(e: Exchange): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${urlOf(e)}`, { method: e.method, headers: headersOf(e) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({
        status: res.statusCode!, body: Buffer.concat(chunks).toString(),
        headers: Object.fromEntries(ROUTE_HEADERS.map((h) => [h, res.headers[h] as string | undefined])),
        cookies: res.headers['set-cookie'] ?? [],
      }));
    });
    req.on('error', reject);
    req.end(e.body);
  });
}
async function viaRoute(e: Exchange): Promise<Answer> {
  const res = await handleTrpcRequest(new Request(`${base}${urlOf(e)}`, { method: e.method, headers: headersOf(e), body: e.body }));
  return {
    status: res.status, body: await res.text(),
    headers: Object.fromEntries(ROUTE_HEADERS.map((h) => [h, res.headers.get(h) ?? undefined])),
    cookies: res.headers.getSetCookie(),
  };
}
const input = (v: unknown) => JSON.stringify(superjson.serialize(v));
const query = (v: unknown) => `input=${encodeURIComponent(input(v))}`;

describe('the web server answers /api/trpc as the Next.js route does', () => {
  it('successes, batches, validation, auth, role, domain, CSRF, unreadable-input, parse and method errors', async () => {
    const tenant = await insertTenant(t.database.db);
    const manager = await insertUser(t.database.db, 'pin_manager', tenant);
    const viewer = await insertUser(t.database.db, 'viewer', tenant);
    const cookieOf = async (userId: string) => `${SESSION_COOKIE}=${(await createSession(t.database.db, userId, 1)).token}`;
    const managerCookie = { cookie: await cookieOf(manager.id) };
    const viewerCookie = { cookie: await cookieOf(viewer.id) };
    const exchanges: Exchange[] = [
      { method: 'GET', path: 'auth.me', headers: managerCookie },
      { method: 'GET', path: 'auth.me' },
      { method: 'GET', path: 'auth.me,auth.me', query: 'batch=1&input=%7B%7D', headers: managerCookie },
      { method: 'GET', path: 'booking.byId', query: query({ bookingId: randomUUID() }), headers: managerCookie },
      { method: 'GET', path: 'booking.byId', query: query({ bookingId: 'not-a-uuid' }), headers: managerCookie },
      { method: 'GET', path: 'booking.byId', query: 'input=%7Bbroken', headers: managerCookie },
      { method: 'GET', path: 'booking.byId', query: `${query({ bookingId: randomUUID() })}&connectionParams=%7B`, headers: managerCookie },
      { method: 'GET', path: 'booking.create', headers: managerCookie }, // a mutation by GET: 405
      { method: 'GET', path: 'booking.nothing', headers: managerCookie },
      { method: 'POST', path: 'booking.create', body: input({ dealId: randomUUID(), propertyObjectId: randomUUID(), programId: randomUUID() }) },
      { method: 'POST', path: 'booking.create', body: input({ dealId: randomUUID(), propertyObjectId: randomUUID(), programId: randomUUID() }), headers: viewerCookie },
      { method: 'POST', path: 'booking.create', body: input({ dealId: 'x' }), headers: managerCookie },
      { method: 'POST', path: 'booking.confirm', body: input({ bookingId: randomUUID() }), headers: managerCookie },
      { method: 'POST', path: 'booking.confirm', body: '{"json":', headers: managerCookie },
      { method: 'POST', path: 'booking.confirm', body: 'null', headers: managerCookie },
      { method: 'POST', path: 'booking.confirm', body: input({ bookingId: randomUUID() }), headers: { ...managerCookie, origin: 'https://evil.example' } },
      { method: 'POST', path: 'auth.signIn', body: input({ email: manager.email, password: 'wrong password' }) },
      { method: 'POST', path: 'auth.signOut', body: '{"json":null}' },
    ];
    for (const e of exchanges) {
      const label = `${e.method} ${e.path} ${e.query ?? e.body ?? ''}`;
      const route = await viaRoute(e);
      expect(await viaWebServer(e), label).toEqual(route);
      expect(route.headers['cache-control'], label).toBe('no-store');
    }
  });

  it('a cookie set by the procedure, and a command that succeeds: the same answer', async () => {
    const tenant = await insertTenant(t.database.db);
    const manager = await insertUser(t.database.db, 'pin_manager', tenant);
    const signIn: Exchange = { method: 'POST', path: 'auth.signIn', body: input({ email: manager.email, password: TEST_PASSWORD }) };
    // a new session each time: its token and expiry are the only difference
    const normalised = (a: Answer) => JSON.parse(JSON.stringify(a).replace(/pin_session=[^;"]+/g, 'pin_session=T').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z|\w{3}, \d\d \w{3} \d{4} [\d:]+ GMT/g, 'DATE')) as Answer;
    const served = await viaWebServer(signIn);
    expect(served.cookies).toHaveLength(1);
    expect(normalised(served)).toEqual(normalised(await viaRoute(signIn)));

    const cookie = { cookie: served.cookies[0]!.split(';')[0]! };
    const program = await insertProgram(t, tenant);
    const create = async (via: (e: Exchange) => Promise<Answer>) => {
      const deal = await insertDeal(t, tenant);
      const objectId = (await insertTenantWorld(t.database.db, tenant)).objectIds.free;
      const answer = await via({ method: 'POST', path: 'booking.create', body: input({ dealId: deal.id, propertyObjectId: objectId, programId: program.id }), headers: cookie });
      // ids and times are the booking's own: compare the shape and the statuses
      return { ...answer, body: JSON.stringify(JSON.parse(answer.body), (k, v: unknown) => (typeof v === 'string' && /^[0-9a-f-]{36}$|^\d{4}-\d\d-\d\dT|^BK-/.test(v) ? k : v)) };
    };
    const viaServer = await create(viaWebServer);
    expect(viaServer.status, viaServer.body).toBe(200);
    expect(viaServer.body).toContain('"status":"Reserved"');
    expect(viaServer).toEqual(await create(viaRoute));
  });
});
