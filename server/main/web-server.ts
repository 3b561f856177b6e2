/**
 * The web process: Next.js (the production build in .next) behind a node:http server of our own, so
 * that every request carries its TCP peer's address in a header the client cannot set
 * (server/auth/client-ip.ts: `next start` shows route handlers no socket and keeps a client-sent
 * X-Forwarded-For). Usage: `tsx server/main/web-server.ts -p <port> -H <host>` (npm run web:start).
 *
 * /api/trpc/<procedure> is answered here without the Next.js request pipeline (server/trpc/node-http.ts:
 * the route's own handler: that pipeline is most of the web's CPU per command, docs/decisions/0011);
 * WEB_TRPC_THROUGH_NEXT=1 sends it through Next.js like every other path (the bench compares both).
 *
 * WEB_CONCURRENCY=<n> (default 1) runs n web processes on the one port (node:cluster: the primary
 * accepts, the workers answer; a worker that dies is replaced). Each process has its own metrics:
 * worker k (0-based) serves WEB_METRICS_PORT + k.
 */
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import next from 'next';
import { markPeerAddressStamped, stampPeerAddress } from '../auth/client-ip';
import { loadEnv } from './env';
import { METRICS_PORT_HEADER, setMetricsPortSecret } from '../platform/web-metrics';
import { isTrpcPath, serveTrpc } from '../trpc/node-http';

const arg = (flag: string, def: string) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const port = Number(arg('-p', process.env.PORT ?? '3000'));
const hostname = arg('-H', process.env.HOSTNAME ?? '127.0.0.1');
const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const processes = Math.max(1, Math.floor(Number(process.env.WEB_CONCURRENCY ?? '1')) || 1);
const trpcThroughNext = process.env.WEB_TRPC_THROUGH_NEXT === '1';

/** The cluster primary: forks the web processes, replaces one that dies, forwards SIGTERM/SIGINT. */
function primary(): void {
  let stopping = false;
  const fork = (index: number) => {
    const started = Date.now();
    cluster.fork({ WEB_PROCESS_INDEX: String(index) }).on('exit', (code, signal) => {
      if (stopping) return;
      // one that dies during its start-up (a port in use, a bad setting) would die again: give up instead of looping
      if (Date.now() - started < 15_000) {
        console.error(JSON.stringify({ level: 'error', msg: 'web: process died during start-up, stopping', index, code, signal }));
        stop('SIGTERM', 1);
        return;
      }
      console.error(JSON.stringify({ level: 'error', msg: 'web: process died, starting another', index, code, signal }));
      fork(index);
    });
  };
  for (let i = 0; i < processes; i++) fork(i);
  console.log(`web: ${processes} processes (WEB_CONCURRENCY)`);
  function stop(signal: NodeJS.Signals, exitCode = 0): void {
    if (stopping) return;
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
    const done = () => { if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode); };
    cluster.on('exit', done);
    done();
    setTimeout(() => process.exit(exitCode), 7_000).unref();
  }
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function main(): Promise<void> {
  markPeerAddressStamped();
  const origin = `http://${hostname}:${port}`;
  const app = next({ dev: false, dir, hostname, port });
  await app.prepare();
  const handle = app.getRequestHandler();
  const failed = (res: http.ServerResponse) => (e: unknown) => {
    console.error(JSON.stringify({ level: 'error', msg: 'web: request failed', err: (e as Error).message }));
    if (!res.headersSent) res.writeHead(500);
    res.end();
  };
  const server = http.createServer((req, res) => {
    stampPeerAddress(req);
    delete req.headers[METRICS_PORT_HEADER];
    if (!trpcThroughNext && isTrpcPath(req.url)) serveTrpc(req, res, origin).catch(failed(res));
    else handle(req, res).catch(failed(res));
  });
  server.listen(port, hostname, () => console.log(`web listening on http://${hostname}:${port}`));

  // the web's /metrics on a port of its own (like the worker's), on 127.0.0.1 only: the /api/metrics
  // route, told by a secret header of this process that the request came through here
  const basePort = loadEnv().WEB_METRICS_PORT;
  const metricsPort = basePort > 0 ? basePort + Number(process.env.WEB_PROCESS_INDEX ?? '0') : 0;
  const secret = randomBytes(32).toString('hex');
  setMetricsPortSecret(secret);
  const metrics = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') return void res.writeHead(404).end('not found');
    req.url = '/api/metrics';
    req.headers[METRICS_PORT_HEADER] = secret;
    handle(req, res).catch(failed(res));
  });
  if (metricsPort > 0) metrics.listen(metricsPort, '127.0.0.1', () => console.log(`web metrics on http://127.0.0.1:${metricsPort}/metrics`));
  const stop = () => {
    metrics.close();
    server.close(() => process.exit(0));
    server.closeAllConnections(); // idle keep-alive sockets would hold close() open
    setTimeout(() => process.exit(0), 5_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (processes > 1 && cluster.isPrimary) primary();
else main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
