/**
 * The HTTP face of the tRPC API (/api/trpc/<procedure>), as a fetch handler: CSRF (same origin for
 * POST), body and batch limits, the session lookup, the request metric and Cache-Control. Served by the
 * Next.js route (app/api/trpc/[trpc]/route.ts) and, without the Next.js request pipeline, by the web
 * server (scripts/web-server.ts through node-http.ts) — one behaviour either way.
 */
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import {
  getAcceptHeader, getErrorShape, getHTTPStatusCode, getRequestInfo, getTRPCErrorFromUnknown, isAsyncIterable, isObject, isPromise,
  transformTRPCResponse, TRPCError, type TRPCRequestInfo, type TRPCResponse,
} from '@trpc/server/unstable-core-do-not-import';
import { appRouter } from './root';
import { correlationIdOf } from '../platform/correlation-id';
import { getServices } from '../web-services';
import { readCookie, resolveSession, SESSION_COOKIE } from '../auth/session';
import type { Context } from './context';
import { observeTrpcRequest } from './http-metrics';
import { databaseUnavailableError } from './init';
import { isDatabaseUnavailable } from '../platform/errors';
import { isCrossOrigin } from '../auth/same-origin';
import { requestAddress } from '../auth/client-ip';
import { limitRequest } from './request-limits';
import { isBatchQuery, requestUrlParts } from './request-url';

/** the closed set of `procedure` label values (anything else is `unknown`) */
const KNOWN_PROCEDURES: ReadonlySet<string> = new Set(Object.keys(appRouter._def.procedures));

export function handleTrpcRequest(req: Request): Promise<Response> {
  return answer(req, false);
}

/**
 * For the node:http adapter, which has read the body whole and found it within API_MAX_BODY_BYTES: the
 * same handling, without streaming the body out into a second Request (limitRequest's bodyWithinLimit).
 */
export function handleTrpcRequestWithBodyRead(req: Request): Promise<Response> {
  return answer(req, true);
}

async function answer(req: Request, bodyWithinLimit: boolean): Promise<Response> {
  const started = performance.now();
  const response = await handle(req, bodyWithinLimit);
  // answers carry user and tenant data: never stored by a browser or a shared cache
  response.headers.set('cache-control', 'no-store');
  observeTrpcRequest(req.url, response.status, (performance.now() - started) / 1000, KNOWN_PROCEDURES);
  return response;
}

async function handle(original: Request, bodyWithinLimit: boolean): Promise<Response> {
  const services = getServices();
  const cookies: string[] = [];
  // CSRF: a mutation must come from our own origin (SameSite=Lax already blocks cross-site POST cookies)
  if (original.method === 'POST') {
    if (isCrossOrigin(original)) return crossOriginRefusal();
  }
  // body and batch size before anything is parsed (API_MAX_BODY_BYTES, API_MAX_BATCH_CALLS)
  const limited = await limitRequest(original, { maxBodyBytes: services.env.API_MAX_BODY_BYTES, maxBatchCalls: services.env.API_MAX_BATCH_CALLS }, bodyWithinLimit);
  if (!limited.ok) return limited.response;
  const req = limited.req;
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    maxBatchSize: services.env.API_MAX_BATCH_CALLS,
    // the session lookup runs inside createContext so that its failure is answered in the tRPC error
    // shape: an unreachable database is a 503 DATABASE_UNAVAILABLE, not an HTML 500 page
    createContext: ({ info }) => contextOf(services, req, cookies, info.isBatchCall),
    responseMeta: () => (cookies.length ? { headers: new Headers(cookies.map((c) => ['set-cookie', c] as [string, string])) } : {}),
    onError: ({ error, path }) => logInternalError(services, error, path),
  });
}

const crossOriginRefusal = () =>
  new Response(JSON.stringify({ error: { message: 'Cross-origin request refused', code: 'FORBIDDEN' } }), { status: 403, headers: { 'content-type': 'application/json' } });

async function contextOf(services: ReturnType<typeof getServices>, req: Request, cookies: string[], batched: boolean): Promise<Context> {
  return {
    ...services,
    ...(await sessionOf(services, req)),
    correlationId: correlationIdOf(req.headers.get('x-correlation-id')),
    setCookie: (c) => cookies.push(c),
    ip: requestAddress(req.headers, services.env.TRUSTED_PROXY_HOPS),
    batched,
  };
}

function logInternalError(services: ReturnType<typeof getServices>, error: TRPCError, path: string | undefined): void {
  if (error.code === 'INTERNAL_SERVER_ERROR') services.logger.error({ path, err: { message: error.message } }, 'trpc error');
}

/**
 * An answer as plain values, for the node:http adapter to write without a whatwg Response. `headers`
 * are in the order a Response's Headers iterate them (sorted by name, as the adapter wrote them before),
 * Set-Cookie apart.
 */
export interface PlainAnswer {
  status: number;
  headers: Array<[string, string]>;
  cookies: string[];
  body: string;
}

/**
 * The procedure of a request that the plain path answers (answerPlainCall), or null for one that goes
 * through tRPC's fetch adapter: the plain path covers one JSON query (GET) or mutation (POST) of the
 * router, not batched, not streamed (`trpc-accept` / `accept: application/jsonl`) — every booking
 * command and most API calls. The rest (batches, HEAD, other methods and content types, subscriptions,
 * unknown or percent-encoded paths and the errors tRPC answers them with) keeps the fetch adapter.
 * Decided from the method, URL and headers only, before anything runs.
 */
export function plainCallProcedure(method: string, url: string, headers: Pick<Headers, 'get'>): string | null {
  if (method !== 'POST' && method !== 'GET') return null;
  const { pathname, query } = requestUrlParts(url);
  const path = pathname.slice(TRPC_PREFIX.length);
  if (!pathname.startsWith(TRPC_PREFIX) || !PLAIN_PATH.test(path) || isBatchQuery(query)) return null;
  const procedure = (appRouter._def.procedures as unknown as Record<string, { _def: { type: string } } | undefined>)[path];
  if (procedure?._def.type !== (method === 'POST' ? 'mutation' : 'query')) return null;
  // the content type tRPC's request parser picks: JSON, or for a GET anything but a form or octet stream
  const contentType = headers.get('content-type')?.toLowerCase().split(';', 1)[0]!.trim();
  if (method === 'POST' ? contentType !== 'application/json' : contentType === 'multipart/form-data' || contentType === 'application/octet-stream') return null;
  if (getAcceptHeader(headers as Headers) === 'application/jsonl') return null;
  return path;
}
const TRPC_PREFIX = '/api/trpc/';
/** a procedure path as the router names them: nothing that URL parsing or percent-decoding would change */
const PLAIN_PATH = /^[A-Za-z0-9_.]+$/;

/**
 * The route's handling (CSRF, limits, session, metric, Cache-Control) of a call that
 * plainCallProcedure accepted, with tRPC's own steps for one call — getRequestInfo, the procedure,
 * getErrorShape, getHTTPStatusCode, transformTRPCResponse — as its resolveResponse takes them for a
 * call that is not batched, without the whatwg Headers, URLs, AbortSignals and Response it builds
 * around them (issue #17: tRPC's machinery and undici were ~8 % of the web's CPU per command). Same
 * status, headers and body as the fetch path (node-http.int.test.ts compares the two).
 */
export async function answerPlainCall(req: Request, path: string): Promise<PlainAnswer> {
  const started = performance.now();
  const answer = await plainCall(req, path);
  observeTrpcRequest(req.url, answer.status, (performance.now() - started) / 1000, KNOWN_PROCEDURES);
  return answer;
}

async function plainCall(req: Request, path: string): Promise<PlainAnswer> {
  const services = getServices();
  if (req.method === 'POST' && isCrossOrigin(req)) return plainOf(crossOriginRefusal());
  const limited = await limitRequest(req, { maxBodyBytes: services.env.API_MAX_BODY_BYTES, maxBatchCalls: services.env.API_MAX_BATCH_CALLS }, true);
  if (!limited.ok) return plainOf(limited.response);
  const config = appRouter._def._config;
  const cookies: string[] = [];
  const answer = (status: number, json: unknown, contentType: boolean): PlainAnswer => ({
    status,
    // tRPC sets JSON's content type only for a call that ran; its error answer for the request has
    // the type a whatwg Response gives any string body
    headers: [NO_STORE, contentType ? JSON_CONTENT : STRING_CONTENT, TRPC_VARY],
    cookies,
    body: JSON.stringify(json),
  });
  let info: TRPCRequestInfo | undefined;
  let ctx: Context | undefined;
  let contentType = false;
  try {
    info = await getRequestInfo({
      req, path, router: appRouter, searchParams: new URLSearchParams(requestUrlParts(req.url).query),
      headers: req.headers, url: null, maxBatchSize: services.env.API_MAX_BATCH_CALLS,
    });
    let ctxError: unknown;
    try {
      ctx = await contextOf(services, req, cookies, info.isBatchCall);
    } catch (cause) {
      ctxError = getTRPCErrorFromUnknown(cause);
    }
    const call = info.calls[0]!;
    const type = call.procedure!._def.type;
    let error: TRPCError | undefined;
    let data: unknown;
    try {
      if (ctxError) throw ctxError;
      data = await call.procedure!({ path: call.path, getRawInput: call.getRawInput, ctx, type, signal: undefined, batchIndex: call.batchIndex });
    } catch (cause) {
      error = getTRPCErrorFromUnknown(cause);
      logInternalError(services, error, call.path);
    }
    contentType = true;
    if (!error && isDataStream(data)) {
      throw new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Cannot use stream-like response in non-streaming request - use httpBatchStreamLink' });
    }
    const res: TRPCResponse = error
      ? { error: getErrorShape({ config, ctx, error, input: call.result(), path: call.path, type: info.type }) }
      : { result: { data } };
    return answer(getHTTPStatusCode([res]), transformTRPCResponse(config, res), true);
  } catch (cause) {
    // what tRPC's caughtErrorToData answers for an error outside the call (the request's parsing)
    const error = getTRPCErrorFromUnknown(cause);
    logInternalError(services, error, undefined);
    const res: TRPCResponse = { error: getErrorShape({ config, ctx, error, type: info?.type ?? 'unknown', path: undefined, input: undefined }) };
    return answer(getHTTPStatusCode(res), transformTRPCResponse(config, res), contentType);
  }
}

const NO_STORE: [string, string] = ['cache-control', 'no-store'];
const JSON_CONTENT: [string, string] = ['content-type', 'application/json'];
const STRING_CONTENT: [string, string] = ['content-type', 'text/plain;charset=UTF-8'];
const TRPC_VARY: [string, string] = ['vary', 'trpc-accept, accept'];

/** tRPC's test for an answer it can only stream (an async iterable, or an object holding promises or iterables). */
function isDataStream(v: unknown): boolean {
  if (!isObject(v)) return false;
  if (isAsyncIterable(v)) return true;
  return Object.values(v).some(isPromise) || Object.values(v).some(isAsyncIterable);
}

/** A refusal built as a Response (CSRF, limits) in the plain form, with Cache-Control as answer() sets it. */
async function plainOf(response: Response): Promise<PlainAnswer> {
  response.headers.set('cache-control', 'no-store');
  const headers = [...response.headers].filter(([name]) => name !== 'set-cookie');
  return { status: response.status, headers, cookies: response.headers.getSetCookie(), body: await response.text() };
}

async function sessionOf(services: ReturnType<typeof getServices>, req: Request): Promise<Pick<Context, 'actor' | 'sessionId'>> {
  try {
    const session = await resolveSession(services.database.db, readCookie(req.headers.get('cookie'), SESSION_COOKIE));
    return { actor: session?.actor ?? null, sessionId: session?.sessionId ?? null };
  } catch (e) {
    if (isDatabaseUnavailable(e)) throw databaseUnavailableError(e);
    throw e;
  }
}
