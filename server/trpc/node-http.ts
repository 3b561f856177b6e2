import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { contentSecurityPolicy } from '../auth/content-security-policy';
import { getServices } from '../web-services';
import { handleTrpcRequest, handleTrpcRequestWithBodyRead } from './http-handler';

/**
 * /api/trpc/<procedure> served straight from the web server's node:http request, without the Next.js
 * request pipeline (router, proxy, route module, response conversion): issue #17 measured that
 * pipeline at most of the web's CPU per booking command. The handler is the route's own
 * (http-handler.ts: CSRF, limits, session, metric, Cache-Control); this file adds what Next.js added
 * around it — the security headers of next.config.mjs and proxy.ts, and gzip of larger answers.
 */

/** One path segment after /api/trpc/, as the route `app/api/trpc/[trpc]` matches; anything else goes to Next.js. */
export function isTrpcPath(url: string | undefined): boolean {
  const path = (url ?? '').split('?', 1)[0]!;
  return path.startsWith('/api/trpc/') && path.length > '/api/trpc/'.length && !path.includes('/', '/api/trpc/'.length);
}

// next.config.mjs `headers()` sets these on every answer of Next.js; the API answers carry them too
const STATIC_SECURITY_HEADERS: ReadonlyArray<[string, string]> = [
  ['x-content-type-options', 'nosniff'],
  ['referrer-policy', 'same-origin'],
  ['x-frame-options', 'DENY'],
];
/**
 * Answers from 10 KiB on are gzipped (Next.js gzipped from 1 KiB: a booking command's ~1.5 KiB answer
 * cost more CPU in zlib than in its transaction). A smaller answer fits the first round trip anyway
 * (TCP's initial window, 10 segments of ~1.4 KB), so compressing it saves the client nothing.
 */
export const GZIP_MIN_BYTES = 10 * 1024;
const gzipAsync = promisify(gzip);

/** The bytes to send and their Content-Encoding (none for a small answer or a client that did not offer gzip). */
export async function encodeAnswer(body: Buffer, acceptEncoding: string | undefined): Promise<{ body: Buffer; encoding?: 'gzip' }> {
  if (body.byteLength < GZIP_MIN_BYTES || !/\bgzip\b/i.test(acceptEncoding ?? '')) return { body };
  return { body: await gzipAsync(body), encoding: 'gzip' };
}

/** The body, read up to `max` + 1 bytes: one byte over is enough for the handler's limit to answer 413. */
function readBody(req: IncomingMessage, max: number): Promise<{ body: Buffer; cut: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.byteLength;
      if (size > max) {
        req.off('data', onData).off('end', onEnd).pause();
        resolve({ body: Buffer.concat(chunks, size).subarray(0, max + 1), cut: true });
      }
    };
    const onEnd = () => resolve({ body: Buffer.concat(chunks, size), cut: false });
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

export async function serveTrpc(req: IncomingMessage, res: ServerResponse, origin: string): Promise<void> {
  const method = req.method ?? 'GET';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  let body: Buffer | undefined;
  let cut = false;
  if (method !== 'GET' && method !== 'HEAD') {
    const max = getServices().env.API_MAX_BODY_BYTES;
    const declared = req.headers['content-length'];
    // a declared length over the limit is answered from the header (request-limits.ts), unread
    if (declared !== undefined && Number(declared) > max) {
      body = Buffer.alloc(0);
      cut = true;
    } else {
      ({ body, cut } = await readBody(req, max));
    }
  }
  const request = new Request(origin + req.url, { method, headers, body: body && new Uint8Array(body) });
  // a body read whole and within the limit is handed on as it is (not streamed out into a second Request)
  const response = await (body !== undefined && !cut ? handleTrpcRequestWithBodyRead(request) : handleTrpcRequest(request));

  const out = Buffer.from(await response.arrayBuffer());
  res.statusCode = response.status;
  for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length) res.setHeader('set-cookie', cookies);
  for (const [name, value] of STATIC_SECURITY_HEADERS) res.setHeader(name, value);
  res.setHeader('content-security-policy', contentSecurityPolicy(randomBytes(16).toString('base64'), process.env.NODE_ENV === 'production'));
  // the rest of a body over the limit is not read: the connection closes after the answer
  if (cut) res.setHeader('connection', 'close');
  if (method === 'HEAD') return void res.end();
  const answer = await encodeAnswer(out, req.headers['accept-encoding']);
  res.setHeader('vary', 'Accept-Encoding');
  if (answer.encoding) res.setHeader('content-encoding', answer.encoding);
  res.setHeader('content-length', answer.body.byteLength);
  res.end(answer.body);
}
