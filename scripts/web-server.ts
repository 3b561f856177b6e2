/**
 * The web process: Next.js (the production build in .next) behind a node:http server of our own, so
 * that every request carries its TCP peer's address in a header the client cannot set
 * (server/auth/client-ip.ts: `next start` shows route handlers no socket and keeps a client-sent
 * X-Forwarded-For). Usage: `tsx scripts/web-server.ts -p <port> -H <host>` (npm run web:start).
 */
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import next from 'next';
import { markPeerAddressStamped, stampPeerAddress } from '../server/auth/client-ip';

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
  const server = http.createServer((req, res) => {
    stampPeerAddress(req);
    handle(req, res).catch((e: unknown) => {
      console.error(JSON.stringify({ level: 'error', msg: 'web: request failed', err: (e as Error).message }));
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.listen(port, hostname, () => console.log(`web listening on http://${hostname}:${port}`));
  const stop = () => {
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
