import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { contentSecurityPolicy } from '../auth/content-security-policy';
import { STATIC_SECURITY_HEADERS } from '../platform/security-headers.mjs';
import { getServices } from '../main/web-services';
import { handleTrpcRequest, handleTrpcRequestWithBodyRead } from './http-handler';
import { answerSingleCall, singleCallMutation } from './single-call';

/**
 * /api/trpc/<procedure> served straight from the web server's node:http request, without the Next.js
 * request pipeline (router, proxy, route module, response conversion): that pipeline is most of the
 * web's CPU per booking command (docs/decisions/0011). The handler is the route's own — tRPC's fetch
 * adapter behind http-handler.ts (CSRF, limits, session, metric, Cache-Control) — given a whatwg Request
 * of the node:http request — or, for a single mutation, single-call.ts without the whatwg objects
 * (docs/decisions/0033) — and this file adds what Next.js added around it: the security headers of
 * next.config.mjs and proxy.ts, and gzip of larger answers (docs/decisions/0026).
 */

/** One path segment after /api/trpc/, as the route `app/api/trpc/[trpc]` matches; anything else goes to Next.js. */
export function isTrpcPath(url: string | undefined): boolean {
  const path = (url ?? '').split('?', 1)[0]!;
  return path.startsWith('/api/trpc/') && path.length > '/api/trpc/'.length && !path.includes('/', '/api/trpc/'.length);
}

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
    // a body of one chunk (every booking command) is used as it is, not copied
    const onEnd = () => resolve({ body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), cut: false });
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/**
 * CSP nonces from one 4 KiB block of crypto.randomBytes, 16 bytes each and each used once, the block
 * refilled when it is used up: one randomBytes call per 256 answers instead of one per answer.
 */
const NONCE_BYTES = 16;
let noncePool = Buffer.alloc(0);
let nonceAt = 0;
export function cspNonce(): string {
  if (nonceAt + NONCE_BYTES > noncePool.byteLength) {
    noncePool = randomBytes(256 * NONCE_BYTES);
    nonceAt = 0;
  }
  const nonce = noncePool.toString('base64', nonceAt, nonceAt + NONCE_BYTES);
  nonceAt += NONCE_BYTES;
  return nonce;
}

export async function serveTrpc(req: IncomingMessage, res: ServerResponse, origin: string): Promise<void> {
  const method = req.method ?? 'GET';
  let body: Buffer = EMPTY;
  let cut = false;
  if (method !== 'GET' && method !== 'HEAD') {
    const max = getServices().env.API_MAX_BODY_BYTES;
    const declared = req.headers['content-length'];
    // a declared length over the limit is answered from the header (request-limits.ts), unread
    if (declared !== undefined && Number(declared) > max) cut = true;
    else ({ body, cut } = await readBody(req, max));
  }
  if (cut) {
    // over the limit: a whatwg Request, so that the handler's limit answers it (413) as for the Next.js route
    const over = new Request(origin + req.url, { method, headers: requestHeaders(req), body: new Uint8Array(body) });
    return writeResponse(req, res, method, await handleTrpcRequest(over), true);
  }
  const headers = headerReader(req);
  const mutation = singleCallMutation(method, req.url ?? '', headers);
  if (mutation) return writeAnswer(req, res, method, await answerSingleCall({ method, url: origin + req.url, headers }, mutation, body), false);
  // the body already read whole and within the limit: handed to the Request as it is, not streamed again
  const request = new Request(origin + req.url, { method, headers: requestHeaders(req), body: method === 'GET' || method === 'HEAD' ? undefined : new Uint8Array(body) });
  return writeResponse(req, res, method, await handleTrpcRequestWithBodyRead(request), false);
}

async function writeResponse(req: IncomingMessage, res: ServerResponse, method: string, response: Response, cut: boolean): Promise<void> {
  const headers: Array<[string, string]> = [];
  for (const [name, value] of response.headers) if (name !== 'set-cookie') headers.push([name, value]);
  const body = Buffer.from(await response.arrayBuffer());
  return writeAnswer(req, res, method, { status: response.status, headers, cookies: response.headers.getSetCookie(), body }, cut);
}

interface Answer {
  status: number;
  /** in the order the Response's Headers iterate them, Set-Cookie apart */
  headers: Array<[string, string]>;
  cookies: string[];
  body: Buffer;
}

/** The answer with what Next.js added around the route (security headers, CSP, gzip of a larger answer). */
async function writeAnswer(req: IncomingMessage, res: ServerResponse, method: string, answer: Answer, cut: boolean): Promise<void> {
  res.statusCode = answer.status;
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  if (answer.cookies.length) res.setHeader('set-cookie', answer.cookies);
  for (const [name, value] of STATIC_SECURITY_HEADERS) res.setHeader(name, value);
  res.setHeader('content-security-policy', contentSecurityPolicy(cspNonce(), process.env.NODE_ENV === 'production'));
  // the rest of a body over the limit is not read: the connection closes after the answer
  if (cut) res.setHeader('connection', 'close');
  if (method === 'HEAD') return void res.end();
  const encoded = await encodeAnswer(answer.body, req.headers['accept-encoding']);
  res.setHeader('vary', 'Accept-Encoding');
  if (encoded.encoding) res.setHeader('content-encoding', encoded.encoding);
  res.setHeader('content-length', encoded.body.byteLength);
  res.end(encoded.body);
}

const EMPTY = Buffer.alloc(0);

/** A node:http request's headers as the single-call path reads them: Headers.get's values (a repeated header joined with ", "). */
function headerReader(req: IncomingMessage): Pick<Headers, 'get'> {
  return {
    get: (name: string) => {
      const value = req.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

function requestHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return headers;
}
