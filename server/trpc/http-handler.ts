/**
 * The HTTP face of the tRPC API (/api/trpc/<procedure>), as a fetch handler: CSRF (same origin for
 * POST), body and batch limits, the session lookup, the request metric and Cache-Control. Served by the
 * Next.js route (app/api/trpc/[trpc]/route.ts) and, without the Next.js request pipeline, by the web
 * server (server/main/web-server.ts through node-http.ts) — one behaviour either way.
 */
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { TRPCError } from '@trpc/server';
import { appRouter } from '../main/app-router';
import { correlationIdOf } from '../platform/correlation-id';
import { getServices } from '../main/web-services';
import { readCookie, resolveSession, SESSION_COOKIE } from '../auth/session';
import type { Context } from './context';
import { observeTrpcRequest } from './http-metrics';
import { databaseUnavailableError } from './init';
import { isDatabaseUnavailable } from '../platform/errors';
import { isCrossOrigin } from '../auth/same-origin';
import { requestAddress } from '../auth/client-ip';
import { limitRequest } from './request-limits';
import { readBucketsOf, readCost } from './read-limit';
import type { Actor } from '../auth/actor';
import { AppError } from '../platform/errors';
import { requestUrlParts } from './request-url';

/** the closed set of `procedure` label values (anything else is `unknown`) */
export const KNOWN_PROCEDURES: ReadonlySet<string> = new Set(Object.keys(appRouter._def.procedures));

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
    if (isCrossOrigin(original, services.env)) return crossOriginRefusal();
  }
  // body and batch size before anything is parsed (API_MAX_BODY_BYTES, API_MAX_BATCH_CALLS)
  const limited = await limitRequest(original, { maxBodyBytes: services.env.API_MAX_BODY_BYTES, maxBatchCalls: services.env.API_MAX_BATCH_CALLS }, bodyWithinLimit);
  if (!limited.ok) return limited.response;
  const req = limited.req;
  const headers: Array<[string, string]> = [];
  const procedures = requestUrlParts(req.url).pathname.slice(TRPC_PREFIX.length).split(',');
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    maxBatchSize: services.env.API_MAX_BATCH_CALLS,
    // the session lookup runs inside createContext so that its failure is answered in the tRPC error
    // shape: an unreachable database is a 503 DATABASE_UNAVAILABLE, not an HTML 500 page
    createContext: ({ info }) => contextOf(services, req, cookies, info.isBatchCall, procedures, headers),
    responseMeta: () => (cookies.length || headers.length ? { headers: new Headers([...cookies.map((c) => ['set-cookie', c] as [string, string]), ...headers]) } : {}),
    onError: ({ error, path }) => logInternalError(services, error, path),
  });
}

export const TRPC_PREFIX = '/api/trpc/';

/** The answer's body to a mutation from another origin (CSRF), before anything runs. */
export const CROSS_ORIGIN_REFUSAL = JSON.stringify({ error: { message: 'Cross-origin request refused', code: 'FORBIDDEN' } });
const crossOriginRefusal = () => new Response(CROSS_ORIGIN_REFUSAL, { status: 403, headers: { 'content-type': 'application/json' } });

/** What the context is made of: a request's method and headers (a whatwg Request, or the single-call path's view of a node:http one). */
export interface RequestHead {
  method: string;
  headers: Pick<Headers, 'get'>;
}

export async function contextOf(
  services: ReturnType<typeof getServices>, req: RequestHead, cookies: string[], batched: boolean, procedures: readonly string[], headers: Array<[string, string]>,
): Promise<Context> {
  const session = await sessionOf(services, req);
  chargeReads(services, req, session.actor, procedures, headers);
  return {
    ...services,
    ...session,
    correlationId: correlationIdOf(req.headers.get('x-correlation-id')),
    setCookie: (c) => cookies.push(c),
    ip: requestAddress(req.headers, services.env.TRUSTED_PROXY_HOPS),
    batched,
  };
}

/**
 * The per-user read limit (read-limit.ts): a query request takes its calls' cost from the caller's
 * bucket once the session is known, before any of them runs; an empty bucket is a 429 TOO_MANY_REQUESTS
 * (API_READ_RATE_LIMITED) with Retry-After. Signed-out reads are refused by the procedures anyway.
 */
function chargeReads(services: ReturnType<typeof getServices>, req: RequestHead, actor: Actor | null, procedures: readonly string[], headers: Array<[string, string]>): void {
  if (req.method !== 'GET' || !actor) return;
  const cost = procedures.reduce((sum, p) => sum + readCost(p), 0);
  const wait = readBucketsOf(services.env).take(actor.userId, cost);
  if (wait <= 0) return;
  const seconds = Math.max(1, Math.ceil(wait));
  headers.push(['retry-after', String(seconds)]);
  const message = `Too many requests for data; try again in ${seconds} s`;
  throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message, cause: new AppError('API_READ_RATE_LIMITED', 'TOO_MANY_REQUESTS', message, { retryAfterSeconds: seconds }) });
}

export function logInternalError(services: ReturnType<typeof getServices>, error: TRPCError, path: string | undefined): void {
  if (error.code === 'INTERNAL_SERVER_ERROR') services.logger.error({ path, err: { message: error.message } }, 'trpc error');
}

async function sessionOf(services: ReturnType<typeof getServices>, req: RequestHead): Promise<Pick<Context, 'actor' | 'sessionId'>> {
  const token = readCookie(req.headers.get('cookie'), SESSION_COOKIE);
  const lookup = async () => {
    const session = await resolveSession(services.database.db, token);
    return { actor: session?.actor ?? null, sessionId: session?.sessionId ?? null };
  };
  try {
    return await lookup();
  } catch (e) {
    if (!isDatabaseUnavailable(e)) throw e;
  }
  // the lookup is a read: run once more, on the connection the pool opens next — after a failover, to the
  // new primary (the multi-host DATABASE_URL); the request's own procedure has not started yet
  try {
    return await lookup();
  } catch (e) {
    if (isDatabaseUnavailable(e)) throw databaseUnavailableError(e);
    throw e;
  }
}
