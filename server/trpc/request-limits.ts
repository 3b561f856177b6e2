/**
 * Limits of an API request, applied by the route handlers before anything is parsed: a body over
 * `maxBodyBytes` is a 413 (a declared Content-Length is refused unread; an undeclared body is read up to
 * the limit and no further), a `?batch=1` request naming more than `maxBatchCalls` procedures is a 400
 * before any of them runs. Answers are in the tRPC error shape (superjson envelope), with fixed messages.
 */
import { isBatchQuery, procedurePath, requestUrlParts } from './request-url';

export interface RequestLimits {
  maxBodyBytes: number;
  maxBatchCalls: number;
}

export type Limited = { ok: true; req: Request } | { ok: false; response: Response };

export function trpcErrorResponse(status: number, code: string, domainCode: string, message: string): Response {
  const body = { error: { json: { message, code: -32600, data: { code, httpStatus: status, domainCode } } } };
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
}

export const payloadTooLarge = (max: number) => trpcErrorResponse(413, 'PAYLOAD_TOO_LARGE', 'API_BODY_TOO_LARGE', `The request body is larger than ${max} bytes`);

/** The batch size of a tRPC URL (`/api/trpc/a,b,c?batch=1` → 3; not a batch → 1). */
export function batchCalls(url: string): number {
  const { pathname, query } = requestUrlParts(url);
  if (!isBatchQuery(query)) return 1;
  const path = procedurePath(pathname);
  return path ? path.split(',').length : 0;
}

/** The body, read up to `max` bytes; null when it is longer (the rest is never read). */
export async function readBodyCapped(req: Request, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > max) return null;
  if (!req.body) return new Uint8Array(new ArrayBuffer(0));
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(new ArrayBuffer(size));
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.byteLength;
  }
  return body;
}

/**
 * `bodyWithinLimit`: the caller has already read the whole body and it is within `maxBodyBytes` (the
 * node:http adapter reads it into a buffer first): the request is passed on as it is, instead of its
 * body being streamed out again into a second Request.
 */
export async function limitRequest(req: Request, limits: RequestLimits, bodyWithinLimit = false): Promise<Limited> {
  if (batchCalls(req.url) > limits.maxBatchCalls) {
    return { ok: false, response: trpcErrorResponse(400, 'BAD_REQUEST', 'API_BATCH_TOO_LARGE', `A batch may carry at most ${limits.maxBatchCalls} calls`) };
  }
  if (req.method === 'GET' || req.method === 'HEAD' || bodyWithinLimit) return { ok: true, req };
  const body = await readBodyCapped(req, limits.maxBodyBytes);
  if (body === null) return { ok: false, response: payloadTooLarge(limits.maxBodyBytes) };
  const headers = new Headers(req.headers);
  headers.delete('content-length');
  return { ok: true, req: new Request(req.url, { method: req.method, headers, body, signal: req.signal }) };
}
