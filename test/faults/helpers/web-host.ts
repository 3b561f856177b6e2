/**
 * A "web" process for the fault scenarios (run with tsx): serves the real route handlers of
 * app/api/trpc/[trpc]/route.ts and app/api/health/route.ts — the code `next start` runs, with the
 * same process-wide services (one postgres.js pool) — on node:http, without building Next.
 * WEB_HOST_PORT: the port. Not part of the application.
 */
import http from 'node:http';
import { GET as health } from '../../../app/api/health/route';
import { GET as trpcGet, POST as trpcPost } from '../../../app/api/trpc/[trpc]/route';
import { markPeerAddressStamped, stampPeerAddress } from '../../../server/auth/client-ip';

const port = Number(process.env.WEB_HOST_PORT);

// as server/main/web-server.ts does: the sign-in limits count the socket's address
markPeerAddressStamped();
const server = http.createServer(async (req, res) => {
  stampPeerAddress(req);
  try {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const request = new Request(url, { method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks) });
    const response = url.pathname === '/api/health'
      ? await health()
      : url.pathname.startsWith('/api/trpc/')
        ? await (req.method === 'POST' ? trpcPost : trpcGet)(request)
        : new Response('not found', { status: 404 });
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch (e) {
    // what Next would answer for a handler that throws
    console.log(JSON.stringify({ level: 'error', msg: 'web host: handler threw', err: (e as Error).message }));
    res.writeHead(500).end('internal error');
  }
});

server.listen(port, '127.0.0.1', () => console.log(JSON.stringify({ level: 'info', msg: 'web host listening', port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
// what `next start` does (next/dist/server/lib/router-server.js): an uncaught exception is logged, the server goes on
process.on('uncaughtException', (e) => console.log(JSON.stringify({ level: 'error', msg: 'uncaughtException (logged, as next start does)', err: e.message })));
