import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { contentSecurityPolicy } from '../auth/content-security-policy';
import { getServices } from '../web-services';
import { answerPlainCall, handleTrpcRequest, handleTrpcRequestWithBodyRead, plainCallProcedure, type PlainAnswer } from './http-handler';

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
    // a body of one chunk (every booking command) is used as it is, not copied
    const onEnd = () => resolve({ body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), cut: false });
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/** A header of the node:http request as `Headers.get` / `has` read it (node has lower-cased the names and joined repeats). */
class IncomingHeaders {
  constructor(private readonly raw: IncomingHttpHeaders) {}
  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * The request as the route's handler and tRPC's fetch adapter read it — url, method, `headers.get/has`,
 * `signal` and `json()` — over the node:http request and its body already read into one Buffer
 * (within API_MAX_BODY_BYTES). A whatwg `Request` would copy the headers into a `Headers`, wrap the
 * body in a stream and read it out again for `json()`: undici's classes were ~5 % of the web's CPU per
 * command (issue #17). Only these members are read (http-handler.ts, request-limits.ts with
 * `bodyWithinLimit`, tRPC's resolveResponse for JSON calls); a body over the limit still goes as a Request.
 */
export class ReadJsonRequest {
  readonly headers: IncomingHeaders;
  // never aborted, as the Request before it (its own per request: tRPC joins it with AbortSignal.any)
  readonly signal: AbortSignal = new AbortController().signal;
  constructor(readonly method: string, readonly url: string, headers: IncomingHttpHeaders, private readonly body: Buffer) {
    this.headers = new IncomingHeaders(headers);
  }
  /** as `Request.text()`: UTF-8, a leading byte-order mark dropped */
  async text(): Promise<string> {
    const b = this.body;
    const bom = b.byteLength >= 3 && b[0] === UTF8_BOM[0] && b[1] === UTF8_BOM[1] && b[2] === UTF8_BOM[2];
    return b.toString('utf8', bom ? 3 : 0);
  }
  /** as `Request.json()`: a body that is not JSON rejects with the SyntaxError */
  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
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
  const request = new ReadJsonRequest(method, origin + req.url, req.headers, body);
  // one JSON call (every booking command): answered without tRPC's fetch adapter and its whatwg objects
  const plainPath = plainCallProcedure(method, request.url, request.headers);
  if (plainPath !== null) return writeAnswer(req, res, method, await answerPlainCall(request as unknown as Request, plainPath), false);
  return writeResponse(req, res, method, await handleTrpcRequestWithBodyRead(request as unknown as Request), false);
}

async function writeResponse(req: IncomingMessage, res: ServerResponse, method: string, response: Response, cut: boolean): Promise<void> {
  const headers: Array<[string, string]> = [];
  for (const [name, value] of response.headers) if (name !== 'set-cookie') headers.push([name, value]);
  const body = Buffer.from(await response.arrayBuffer());
  return writeAnswer(req, res, method, { status: response.status, headers, cookies: response.headers.getSetCookie(), body }, cut);
}

/** The answer with what Next.js added around the route (security headers, CSP, gzip of a larger answer). */
async function writeAnswer(req: IncomingMessage, res: ServerResponse, method: string, answer: Omit<PlainAnswer, 'body'> & { body: string | Buffer }, cut: boolean): Promise<void> {
  res.statusCode = answer.status;
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  if (answer.cookies.length) res.setHeader('set-cookie', answer.cookies);
  for (const [name, value] of STATIC_SECURITY_HEADERS) res.setHeader(name, value);
  res.setHeader('content-security-policy', contentSecurityPolicy(cspNonce(), process.env.NODE_ENV === 'production'));
  // the rest of a body over the limit is not read: the connection closes after the answer
  if (cut) res.setHeader('connection', 'close');
  if (method === 'HEAD') return void res.end();
  const out = typeof answer.body === 'string' ? Buffer.from(answer.body) : answer.body;
  const encoded = await encodeAnswer(out, req.headers['accept-encoding']);
  res.setHeader('vary', 'Accept-Encoding');
  if (encoded.encoding) res.setHeader('content-encoding', encoded.encoding);
  res.setHeader('content-length', encoded.body.byteLength);
  res.end(encoded.body);
}

const EMPTY = Buffer.alloc(0);

function requestHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return headers;
}
