import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTenant, insertUser, TEST_PASSWORD } from '../../test/fixtures/auth.fixtures';
import { STATIC_SECURITY_HEADERS } from '../platform/security-headers.mjs';
import { testContextForRouteHandlers } from '../../test/harness/harness';
import { cspNonce, encodeAnswer, GZIP_MIN_BYTES, isTrpcPath, serveTrpc } from './node-http';

/**
 * /api/trpc served by the web server's own node:http adapter (server/main/web-server.ts → node-http.ts)
 * over a real socket: what the Next.js pipeline added around the route's handler (security headers,
 * CSP, Cache-Control, cookies, limits) is still there, and the paths it answers are the route's.
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

/** A raw HTTP/1.1 exchange (fetch would add, or refuse, what these tests need to control). */
function exchange(path: string, opts: { method?: string; headers?: Record<string, string | number>; body?: Buffer | string; chunks?: number } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: opts.method ?? 'GET', headers: { host: new URL(base).host, ...opts.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    if (opts.chunks) {
      // an undeclared (chunked) body that goes on and on: the server must answer without reading it all
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let sent = 0;
      const pump = () => { while (sent < opts.chunks! && req.write(chunk)) sent++; if (sent < opts.chunks!) req.once('drain', pump); else req.end(); };
      req.on('response', () => { sent = opts.chunks!; });
      pump();
    } else req.end(opts.body);
  });
}
const json = (b: Buffer) => JSON.parse(b.toString()) as Record<string, unknown>;

describe('tRPC on the node:http adapter', () => {
  it('answers only the route\'s paths: one procedure segment after /api/trpc/', () => {
    expect(isTrpcPath('/api/trpc/auth.me')).toBe(true);
    expect(isTrpcPath('/api/trpc/auth.me,chessboard.projects?batch=1&input=%7B%7D')).toBe(true);
    for (const other of ['/api/trpc', '/api/trpc/', '/api/trpc/auth.me/x', '/api/trpcx/auth.me', '/api/health', '/', undefined]) expect(isTrpcPath(other), String(other)).toBe(false);
  });

  it('sign-in, me, sign-out: cookies, no-store, the security headers of every answer and a fresh CSP nonce', async () => {
    const tenant = await insertTenant(t.database.db);
    const user = await insertUser(t.database.db, 'pin_manager', tenant);
    const signIn = await exchange('/api/trpc/auth.signIn', {
      method: 'POST', headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify(superjson.serialize({ email: user.email, password: TEST_PASSWORD })),
    });
    expect(signIn.status, signIn.body.toString()).toBe(200);
    const cookie = (signIn.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!).find((c) => c.startsWith('pin_session='));
    expect(cookie).toBeDefined();
    const me = await exchange('/api/trpc/auth.me', { headers: { cookie: cookie! } });
    const again = await exchange('/api/trpc/auth.me', { headers: { cookie: cookie! } });
    expect(me.status).toBe(200);
    expect(JSON.stringify(json(me.body))).toContain(user.email);
    for (const h of [signIn.headers, me.headers]) {
      expect(h['cache-control']).toBe('no-store');
      expect(h['x-content-type-options']).toBe('nosniff');
      expect(h['x-frame-options']).toBe('DENY');
      expect(h['referrer-policy']).toBe('same-origin');
      // the one definition Next.js serves too (next.config.mjs)
      for (const [name, value] of STATIC_SECURITY_HEADERS) expect(h[name.toLowerCase()], name).toBe(value);
      expect(h['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(h['x-powered-by']).toBeUndefined();
    }
    expect(me.headers['content-security-policy']).not.toBe(again.headers['content-security-policy']);
    expect(me.headers['content-encoding']).toBeUndefined(); // a small answer is not compressed
    const signOut = await exchange('/api/trpc/auth.signOut', { method: 'POST', headers: { 'content-type': 'application/json', cookie: cookie! }, body: '{"json":null}' });
    expect(signOut.status).toBe(200);
    expect((await exchange('/api/trpc/auth.me', { headers: { cookie: cookie! } })).status).toBe(401);
  });

  it('a cross-origin mutation is a 403; a batch over the limit a 400', async () => {
    const cross = await exchange('/api/trpc/auth.signOut', { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, body: '{"json":null}' });
    expect(cross.status).toBe(403);
    const names = Array.from({ length: 11 }, () => 'auth.me').join(',');
    const batch = await exchange(`/api/trpc/${names}?batch=1`);
    expect(batch.status).toBe(400);
    expect(batch.body.toString()).toContain('API_BATCH_TOO_LARGE');
  });

  it('a body over the limit is a 413: a declared one unread, a chunked one cut at the limit, and the connection closes', async () => {
    const declared = await exchange('/api/trpc/auth.signOut', { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': 2 * 1024 * 1024 }, body: Buffer.alloc(0) });
    expect(declared.status).toBe(413);
    expect(declared.headers.connection).toBe('close');
    const chunked = await exchange('/api/trpc/auth.signOut', { method: 'POST', headers: { 'content-type': 'application/json' }, chunks: 64 });
    expect(chunked.status).toBe(413);
    expect(chunked.body.toString()).toContain('API_BODY_TOO_LARGE');
    expect(chunked.headers.connection).toBe('close');
  });

  it('CSP nonces from the pooled random block: 128 bits of base64 each, none repeated across refills', () => {
    const nonces = Array.from({ length: 1000 }, () => cspNonce());
    for (const n of nonces) expect(n).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(new Set(nonces).size).toBe(nonces.length);
  });

  it('over the socket: a body with a byte-order mark is read, a broken one is a 400; a body over the limit a typed 413 that runs nothing', async () => {
    const tenant = await insertTenant(t.database.db);
    const user = await insertUser(t.database.db, 'pin_manager', tenant);
    const signIn = await exchange('/api/trpc/auth.signIn', {
      method: 'POST', headers: { 'content-type': 'application/json', origin: base },
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(superjson.serialize({ email: user.email, password: TEST_PASSWORD })))]),
    });
    expect(signIn.status, signIn.body.toString()).toBe(200);
    const cookie = (signIn.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!).find((c) => c.startsWith('pin_session='))!;
    // (a procedure with input: tRPC reads the body only for one)
    const broken = await exchange('/api/trpc/auth.signIn', { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: '{"json":' });
    expect(broken.status).toBe(400);
    expect(broken.body.toString()).toContain('UNREADABLE_INPUT');
    // sign-out with a body one byte over the limit (chunked, no Content-Length): refused before it runs
    const over = Buffer.alloc(t.env.API_MAX_BODY_BYTES + 1, ' ');
    Buffer.from('{"json":null}').copy(over);
    const tooLarge = await exchange('/api/trpc/auth.signOut', { method: 'POST', headers: { 'content-type': 'application/json', cookie, 'transfer-encoding': 'chunked' }, body: over });
    expect(tooLarge.status).toBe(413);
    expect(json(tooLarge.body)).toMatchObject({ error: { json: { data: { code: 'PAYLOAD_TOO_LARGE', httpStatus: 413, domainCode: 'API_BODY_TOO_LARGE' } } } });
    // the session was not deleted
    expect((await exchange('/api/trpc/auth.me', { headers: { cookie } })).status).toBe(200);
  });

  it('an answer from GZIP_MIN_BYTES on is gzipped for a client that offers gzip; a smaller one is sent as it is', async () => {
    const big = Buffer.from(JSON.stringify({ rows: Array.from({ length: 2000 }, (_, i) => ({ i })) }));
    expect(big.byteLength).toBeGreaterThanOrEqual(GZIP_MIN_BYTES);
    const zipped = await encodeAnswer(big, 'gzip, deflate, br');
    expect(zipped.encoding).toBe('gzip');
    expect(gunzipSync(zipped.body).equals(big)).toBe(true);
    expect((await encodeAnswer(big, undefined)).encoding).toBeUndefined();
    expect((await encodeAnswer(big.subarray(0, GZIP_MIN_BYTES - 1), 'gzip')).encoding).toBeUndefined();
  });
});
