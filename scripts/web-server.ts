/**
 * The web process: Next.js (the production build in .next) behind a node:http server of our own, so
 * that every request carries its TCP peer's address in a header the client cannot set
 * (server/auth/client-ip.ts: `next start` shows route handlers no socket and keeps a client-sent
 * X-Forwarded-For). Usage: `tsx scripts/web-server.ts -p <port> -H <host>` (npm run web:start).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import next from 'next';
import { markPeerAddressStamped, stampPeerAddress } from '../server/auth/client-ip';
import { loadEnv } from '../server/platform/env';
import { METRICS_PORT_HEADER, setMetricsPortSecret } from '../server/platform/web-metrics';

const arg = (flag: string, def: string) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const port = Number(arg('-p', process.env.PORT ?? '3000'));
const hostname = arg('-H', process.env.HOSTNAME ?? '127.0.0.1');
const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<void> {
  markPeerAddressStamped();
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
    handle(req, res).catch(failed(res));
  });
  server.listen(port, hostname, () => console.log(`web listening on http://${hostname}:${port}`));

  // the web's /metrics on a port of its own (like the worker's), on 127.0.0.1 only: the /api/metrics
  // route, told by a secret header of this process that the request came through here
  const metricsPort = loadEnv().WEB_METRICS_PORT;
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

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
