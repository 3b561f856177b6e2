import { randomUUID } from 'node:crypto';
import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import { createSession, SESSION_COOKIE } from '../auth/session';
import { insertTenant, insertTenantWorld, insertUser, TEST_PASSWORD } from '../auth/test-fixtures';
import { insertDeal, insertProgram } from '../crm/crm-test-fixtures';
import { testContextForRouteHandlers } from '../testing/harness';
import { answerPlainCall, handleTrpcRequestWithBodyRead, plainCallProcedure, type PlainAnswer } from './http-handler';
import { ReadJsonRequest } from './node-http';

/**
 * The node:http adapter answers one JSON call without tRPC's fetch adapter (answerPlainCall): for the
 * same request it must answer what the fetch path answers — status, headers, body, cookies — for a
 * success, every kind of error and a cookie set by the procedure; anything else keeps the fetch path.
 */
const t = testContextForRouteHandlers();
const ORIGIN = 'http://127.0.0.1:3000';

type Exchange = { method: 'GET' | 'POST'; path: string; query?: string; headers?: Record<string, string>; body?: string };
const requestOf = (e: Exchange) =>
  new ReadJsonRequest(e.method, `${ORIGIN}/api/trpc/${e.path}${e.query ? `?${e.query}` : ''}`,
    { host: '127.0.0.1:3000', ...(e.method === 'POST' ? { 'content-type': 'application/json', origin: ORIGIN } : {}), ...e.headers },
    Buffer.from(e.body ?? '')) as unknown as Request;

async function viaFetchAdapter(e: Exchange): Promise<PlainAnswer> {
  const response = await handleTrpcRequestWithBodyRead(requestOf(e));
  return {
    status: response.status,
    headers: [...response.headers].filter(([name]) => name !== 'set-cookie'),
    cookies: response.headers.getSetCookie(),
    body: await response.text(),
  };
}
async function viaPlainPath(e: Exchange): Promise<PlainAnswer> {
  const req = requestOf(e);
  const path = plainCallProcedure(req.method, req.url, req.headers);
  expect(path, `${e.method} ${e.path} takes the plain path`).toBe(e.path);
  return answerPlainCall(req, path!);
}
const input = (v: unknown) => JSON.stringify(superjson.serialize(v));
const query = (v: unknown) => `input=${encodeURIComponent(input(v))}`;

describe('one JSON call without the fetch adapter', () => {
  it('answers as the fetch adapter does: successes, validation, auth, role, domain, unreadable-input and parse errors', async () => {
    const tenant = await insertTenant(t.database.db);
    const manager = await insertUser(t.database.db, 'pin_manager', tenant);
    const viewer = await insertUser(t.database.db, 'viewer', tenant);
    const cookieOf = async (userId: string) => `${SESSION_COOKIE}=${(await createSession(t.database.db, userId, 1)).token}`;
    const managerCookie = { cookie: await cookieOf(manager.id) };
    const viewerCookie = { cookie: await cookieOf(viewer.id) };
    const exchanges: Exchange[] = [
      { method: 'GET', path: 'auth.me', headers: managerCookie },
      { method: 'GET', path: 'auth.me' },
      { method: 'GET', path: 'booking.byId', query: query({ bookingId: randomUUID() }), headers: managerCookie },
      { method: 'GET', path: 'booking.byId', query: query({ bookingId: 'not-a-uuid' }), headers: managerCookie },
      { method: 'GET', path: 'booking.byId', query: 'input=%7Bbroken', headers: managerCookie },
      { method: 'GET', path: 'booking.byId', query: `${query({ bookingId: randomUUID() })}&connectionParams=%7B`, headers: managerCookie },
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
      expect(await viaPlainPath(e), label).toEqual(await viaFetchAdapter(e));
    }
  });

  it('a cookie set by the procedure, and a command that succeeds: same answer on both paths', async () => {
    const tenant = await insertTenant(t.database.db);
    const manager = await insertUser(t.database.db, 'pin_manager', tenant);
    const signIn: Exchange = { method: 'POST', path: 'auth.signIn', body: input({ email: manager.email, password: TEST_PASSWORD }) };
    // a new session each time: its token and expiry are the only difference
    const normalised = (a: PlainAnswer) => JSON.parse(JSON.stringify(a).replace(/pin_session=[^;"]+/g, 'pin_session=T').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z|\w{3}, \d\d \w{3} \d{4} [\d:]+ GMT/g, 'DATE')) as PlainAnswer;
    const plainSignIn = await viaPlainPath(signIn);
    expect(plainSignIn.cookies).toHaveLength(1);
    expect(normalised(plainSignIn)).toEqual(normalised(await viaFetchAdapter(signIn)));

    const cookie = { cookie: plainSignIn.cookies[0]!.split(';')[0]! };
    const world = await insertTenantWorld(t.database.db, tenant);
    const program = await insertProgram(t, tenant);
    const create = async (via: (e: Exchange) => Promise<PlainAnswer>) => {
      const deal = await insertDeal(t, tenant);
      const objectId = via === viaPlainPath ? world.objectIds.free : (await insertTenantWorld(t.database.db, tenant)).objectIds.free;
      const answer = await via({ method: 'POST', path: 'booking.create', body: input({ dealId: deal.id, propertyObjectId: objectId, programId: program.id }), headers: cookie });
      // ids and times are the booking's own: compare the shape and the statuses
      return { ...answer, body: JSON.stringify(JSON.parse(answer.body), (k, v: unknown) => (typeof v === 'string' && /^[0-9a-f-]{36}$|^\d{4}-\d\d-\d\dT|^BK-/.test(v) ? k : v)) };
    };
    const plain = await create(viaPlainPath);
    expect(plain.status, plain.body).toBe(200);
    expect(plain.body).toContain('"status":"Reserved"');
    expect(plain).toEqual(await create(viaFetchAdapter));
  });

  it('batches, HEAD, other methods and content types, streaming, wrong method for the type, unknown or encoded paths keep the fetch adapter', () => {
    const plain = (method: string, path: string, headers: Record<string, string> = {}) =>
      plainCallProcedure(method, `${ORIGIN}/api/trpc/${path}`, new Headers({ 'content-type': 'application/json', ...headers }));
    expect(plain('POST', 'booking.create')).toBe('booking.create');
    expect(plain('POST', 'booking.create', { 'content-type': 'Application/JSON; charset=utf-8' })).toBe('booking.create');
    expect(plain('GET', 'auth.me')).toBe('auth.me');
    expect(plain('GET', 'auth.me', { 'content-type': 'text/plain' })).toBe('auth.me');
    expect(plain('GET', 'auth.me?batch=1')).toBeNull();
    expect(plain('GET', 'auth.me,auth.me?batch=1')).toBeNull();
    expect(plain('HEAD', 'auth.me')).toBeNull();
    expect(plain('PUT', 'booking.create')).toBeNull();
    expect(plain('GET', 'booking.create')).toBeNull(); // a mutation by GET: tRPC's METHOD_NOT_SUPPORTED
    expect(plain('POST', 'auth.me')).toBeNull(); // a query by POST
    expect(plain('POST', 'booking.create', { 'content-type': 'text/plain' })).toBeNull();
    expect(plain('POST', 'booking.create', { 'content-type': 'multipart/form-data; boundary=x' })).toBeNull();
    expect(plain('GET', 'auth.me', { 'content-type': 'application/octet-stream' })).toBeNull();
    expect(plain('POST', 'booking.create', { 'trpc-accept': 'application/jsonl' })).toBeNull();
    expect(plain('POST', 'booking.create', { accept: 'application/json, application/jsonl' })).toBeNull();
    expect(plain('POST', 'booking.nothing')).toBeNull();
    expect(plain('POST', 'booking%2Ecreate')).toBeNull();
  });
});
