import { getServices } from '@/server/platform/services';
import { readCookie, resolveSession, SESSION_COOKIE } from '@/server/auth/session';
import { buildingFingerprint } from '@/server/chessboard/queries';
import { ensureLiveListener, subscribeLive, type LiveSignal } from '@/server/chessboard/live-feed';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

const HEARTBEAT_MS = 15_000;
const SESSION_RECHECK_MS = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Server-sent events for open console pages. `?buildingId=` makes the stream watch one grid: on a
 * chessboard commit it re-reads the building's fingerprint (tenant-scoped) and sends `grid` only if it
 * changed. `crm` tells booking views to refetch; `resync` follows a lost LISTEN connection. Comment
 * lines every 15 s keep proxies from closing an idle stream; EventSource reconnects by itself.
 */
export async function GET(req: Request): Promise<Response> {
  const services = getServices();
  const session = await resolveSession(services.database.db, readCookie(req.headers.get('cookie'), SESSION_COOKIE));
  if (!session) return new Response('Sign in first', { status: 401 });
  const buildingIdParam = new URL(req.url).searchParams.get('buildingId');
  const buildingId = buildingIdParam && UUID.test(buildingIdParam) ? buildingIdParam : null;

  try {
    await ensureLiveListener(services.database, services.logger);
  } catch (e) {
    services.logger.error({ event: 'live_feed.listen_failed', err: { message: (e as Error).message } }, 'live feed LISTEN failed');
    return new Response('Live updates unavailable', { status: 503 });
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

      let fingerprint: string | null = null;
      let checking = false;
      let dirty = false;
      const checkGrid = async () => {
        if (!buildingId) return send('chessboard', {});
        if (checking) {
          dirty = true;
          return;
        }
        checking = true;
        try {
          do {
            dirty = false;
            const next = await buildingFingerprint(services.database.db, session.actor, buildingId);
            if (next !== fingerprint) {
              fingerprint = next;
              send('grid', { buildingId });
            }
          } while (dirty && !closed);
        } catch (e) {
          services.logger.warn({ event: 'live_feed.check_failed', err: { message: (e as Error).message } }, 'live feed check failed');
        } finally {
          checking = false;
        }
      };
      let crmTimer: ReturnType<typeof setTimeout> | null = null;
      const onSignal = (signal: LiveSignal) => {
        if (signal === 'chessboard') void checkGrid();
        else if (signal === 'resync') send('resync', {});
        else if (!crmTimer) crmTimer = setTimeout(() => { crmTimer = null; send('crm', {}); }, 100);
      };

      if (buildingId) fingerprint = await buildingFingerprint(services.database.db, session.actor, buildingId).catch(() => null);
      const unsubscribe = subscribeLive(onSignal);
      write('retry: 2000\n\n');
      send('ready', { buildingId });

      const heartbeat = setInterval(() => write(`: heartbeat ${Date.now()}\n\n`), HEARTBEAT_MS);
      const recheck = setInterval(async () => {
        const still = await resolveSession(services.database.db, readCookie(req.headers.get('cookie'), SESSION_COOKIE)).catch(() => session);
        if (!still) {
          send('signed-out', {});
          cleanup();
        }
      }, SESSION_RECHECK_MS);

      cleanup = () => {
        if (closed) return;
        closed = true;
        unsubscribe();
        clearInterval(heartbeat);
        clearInterval(recheck);
        if (crmTimer) clearTimeout(crmTimer);
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      req.signal.addEventListener('abort', () => cleanup());
    },
    cancel() {
      cleanup();
    },
  });

  return new Response(stream, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    },
  });
}
