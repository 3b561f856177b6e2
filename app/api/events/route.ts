import { getServices } from '@/server/main/web-services';
import { readCookie, resolveSession, SESSION_COOKIE, sessionRevocationKey } from '@/server/auth/session';
import { tenantScope } from '@/server/auth/actor';
import { visibleBuildingTenant } from '@/server/chessboard/queries';
import { ensureLiveListener, openLiveStream, type LiveEvent } from '@/server/chessboard/live-feed';
import { methodNotAllowed } from '@/server/platform/method-not-allowed';
import { claimLiveStream, LIVE_STREAM_RETRY_AFTER_S } from '@/server/chessboard/live-stream-cap';


/** a tenant id no row has: a scope that matches nothing */
const NO_TENANT = '00000000-0000-0000-0000-000000000000';
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

const HEARTBEAT_MS = 15_000;
const SESSION_RECHECK_MS = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Server-sent events for open console pages (server/chessboard/live-feed.ts fans the notices out).
 * `?buildingId=` makes the stream watch one grid of a building the actor may see: it gets `grid` when
 * the building's shared fingerprint changed. `crm` (debounced 100 ms) tells booking views to refetch;
 * `resync` follows a lost LISTEN connection. Only the actor's tenant's commits reach the stream. Sign-out
 * ends the stream at once (NOTIFY); the session is re-checked every minute for expiry. Comment lines
 * every 15 s keep proxies from closing an idle stream; EventSource reconnects by itself.
 */
export async function GET(req: Request): Promise<Response> {
  const services = getServices();
  const session = await resolveSession(services.database.db, readCookie(req.headers.get('cookie'), SESSION_COOKIE));
  if (!session) return new Response('Sign in first', { status: 401, headers: { 'cache-control': 'no-store' } });
  const buildingIdParam = new URL(req.url).searchParams.get('buildingId');
  const buildingId = buildingIdParam && UUID.test(buildingIdParam) ? buildingIdParam : null;

  try {
    await ensureLiveListener(services.database, services.logger);
  } catch (e) {
    services.logger.error({ event: 'live_feed.listen_failed', err: { message: (e as Error).message } }, 'live feed LISTEN failed');
    return new Response('Live updates unavailable', { status: 503, headers: { 'cache-control': 'no-store' } });
  }
  // a building of another tenant (or none) is not watched: the stream then carries no grid events
  const buildingTenant = buildingId ? await visibleBuildingTenant(services.database.db, session.actor, buildingId) : null;
  let scope: string | null;
  try {
    // an investor (no tenant) hears the developer of the building it looks at (one of its deals'
    // developers: visibleBuildingTenant is scoped) and nothing without one — never every tenant
    scope = session.actor.role === 'investor' ? (buildingTenant ?? NO_TENANT) : tenantScope(session.actor); // null: every tenant (pin_manager, ops)
  } catch {
    return new Response('Your account has no tenant', { status: 403, headers: { 'cache-control': 'no-store' } });
  }

  // at most LIVE_STREAMS_PER_SESSION open streams per session (live-stream-cap.ts): the new one is refused
  const release = claimLiveStream(session.sessionId, services.env.LIVE_STREAMS_PER_SESSION);
  if (!release) {
    return new Response('Too many live streams open for this session', {
      status: 429, headers: { 'cache-control': 'no-store', 'retry-after': String(LIVE_STREAM_RETRY_AFTER_S) },
    });
  }

  const encoder = new TextEncoder();
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      let closed = false;
      const write = (chunk: string) => {
        if (closed) return;
        try {
          controller.enqueue(encoder.encode(chunk));
        } catch {
          cleanup();
        }
      };
      const send = (event: string, data: unknown) => write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

      let crmTimer: ReturnType<typeof setTimeout> | null = null;
      let notificationsTimer: ReturnType<typeof setTimeout> | null = null;
      const notify = (event: LiveEvent) => {
        if (event === 'crm') {
          crmTimer ??= setTimeout(() => { crmTimer = null; send('crm', {}); }, 100);
        } else if (event === 'notifications') {
          // the bell refetches what the viewer may see (the tenant's notice says only "something new")
          notificationsTimer ??= setTimeout(() => { notificationsTimer = null; send('notifications', {}); }, 100);
        } else send(event, event === 'grid' ? { buildingId } : {});
      };
      const signedOut = () => {
        send('signed-out', {});
        cleanup();
      };
      let unsubscribe = () => {};
      cleanup = () => {
        if (closed) return;
        closed = true;
        release();
        unsubscribe();
        clearInterval(heartbeat);
        clearInterval(recheck);
        if (crmTimer) clearTimeout(crmTimer);
        if (notificationsTimer) clearTimeout(notificationsTimer);
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      const heartbeat = setInterval(() => write(`: heartbeat ${Date.now()}\n\n`), HEARTBEAT_MS);
      const recheck = setInterval(async () => {
        const still = await resolveSession(services.database.db, readCookie(req.headers.get('cookie'), SESSION_COOKIE)).catch(() => session);
        if (!still) signedOut();
      }, SESSION_RECHECK_MS);
      req.signal.addEventListener('abort', () => cleanup());

      unsubscribe = await openLiveStream({
        tenantId: scope,
        revocationKey: sessionRevocationKey(session.sessionId),
        building: buildingId && buildingTenant ? { id: buildingId, tenantId: buildingTenant } : null,
        notify,
        revoked: signedOut,
      });
      if (closed) unsubscribe(); // aborted while registering
      write('retry: 2000\n\n');
      send('ready', { buildingId });
      // signed out between the session check above and the registration: its NOTIFY was missed
      const still = await resolveSession(services.database.db, readCookie(req.headers.get('cookie'), SESSION_COOKIE)).catch(() => session);
      if (!still) signedOut();
    },
    cancel() {
      cleanup();
    },
  });

  return new Response(stream, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    },
  });
}

// the stream is read with GET (EventSource); anything else is a 405 that no cache keeps
export const POST = methodNotAllowed('GET');
export const PUT = POST;
export const PATCH = POST;
export const DELETE = POST;
