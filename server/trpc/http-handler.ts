/**
 * The HTTP face of the tRPC API (/api/trpc/<procedure>), as a fetch handler: CSRF (same origin for
 * POST), body and batch limits, the session lookup, the request metric and Cache-Control. Served by the
 * Next.js route (app/api/trpc/[trpc]/route.ts) and, without the Next.js request pipeline, by the web
 * server (scripts/web-server.ts through node-http.ts) — one behaviour either way.
 */
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
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
    if (isCrossOrigin(original)) {
      return new Response(JSON.stringify({ error: { message: 'Cross-origin request refused', code: 'FORBIDDEN' } }), { status: 403, headers: { 'content-type': 'application/json' } });
    }
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
    createContext: async ({ info }): Promise<Context> => ({
      ...services,
      ...(await sessionOf(services, req)),
      correlationId: correlationIdOf(req.headers.get('x-correlation-id')),
      setCookie: (c) => cookies.push(c),
      ip: requestAddress(req.headers, services.env.TRUSTED_PROXY_HOPS),
      batched: info.isBatchCall,
    }),
    responseMeta: () => (cookies.length ? { headers: new Headers(cookies.map((c) => ['set-cookie', c] as [string, string])) } : {}),
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') services.logger.error({ path, err: { message: error.message } }, 'trpc error');
    },
  });
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
