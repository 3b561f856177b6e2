import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR, REPO_ROOT } from '../../../scripts/infra';
import { freePort } from '../../../scripts/infra/postgres';

/**
 * Real worker (and web) PROCESSES for the fault scenarios: `node_modules/.bin/tsx server/main/worker.ts`
 * in a process group of its own, so that `kill9()` kills the tsx launcher AND the node process that
 * runs the worker (SIGKILL cannot be forwarded). stdout/stderr go to `.data/faults-logs/<name>.log`
 * and are parsed as pino JSON lines for the assertions.
 */

export const LOG_DIR = path.join(DATA_DIR, 'faults-logs');

/** Fast schedules: every job that the scenarios drive ticks every second. */
export const FAST_SCHEDULES: Record<string, string> = {
  HOLD_EXPIRATION_SCHEDULE: '* * * * * *',
  OUTBOX_RELAY_SCHEDULE: '* * * * * *',
};

export interface LogLine {
  level?: string;
  msg?: string;
  [k: string]: unknown;
}

export interface ManagedProcess {
  name: string;
  pid: number;
  logFile: string;
  port: number;
  /** parsed JSON log lines so far (non-JSON output is kept as { msg: raw, raw: true }) */
  lines: LogLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  /** resolves on the first log line that matches */
  waitForLine(match: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** SIGKILL to the whole process group (launcher and worker) */
  kill9(): Promise<void>;
  /** SIGTERM (graceful), SIGKILL after `timeoutMs` */
  stop(timeoutMs?: number): Promise<void>;
}

// logs of earlier runs are kept for a day (a failing scenario names its log file), then removed
try {
  for (const f of fs.readdirSync(LOG_DIR)) {
    const file = path.join(LOG_DIR, f);
    if (Date.now() - fs.statSync(file).mtimeMs > 24 * 3600_000) fs.rmSync(file, { force: true });
  }
} catch { /* no log folder yet */ }

const live = new Set<ManagedProcess>();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // a crashed test must not leave worker processes behind (they would keep consuming)
  process.on('exit', () => {
    for (const p of live) {
      try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
}

function baseEnv(): Record<string, string> {
  // a clean environment: nothing of vitest's (VITEST_*, NODE_OPTIONS) leaks into the worker
  const keep = ['PATH', 'HOME', 'LANG', 'TZ', 'JAVA_HOME', 'TMPDIR'];
  return Object.fromEntries(keep.flatMap((k) => (process.env[k] !== undefined ? [[k, process.env[k]!]] : [])));
}

export function spawnManaged(name: string, args: string[], env: Record<string, string>, port: number): ManagedProcess {
  installExitHook();
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const logFile = path.join(LOG_DIR, `${name}.log`);
  const out = fs.createWriteStream(logFile, { flags: 'a' });
  const child: ChildProcess = spawn(path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), args, {
    cwd: REPO_ROOT,
    env: { ...baseEnv(), NODE_ENV: 'test', LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // own process group: kill(-pid) reaches the worker behind the tsx launcher
  });
  const lines: LogLine[] = [];
  const waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  const onLine = (raw: string) => {
    if (!raw.trim()) return;
    let line: LogLine;
    try { line = JSON.parse(raw) as LogLine; } catch { line = { msg: raw, raw: true }; }
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.match(line)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(line); }
    }
  };
  for (const stream of [child.stdout!, child.stderr!]) {
    let buf = '';
    stream.on('data', (chunk: Buffer) => {
      out.write(chunk);
      buf += chunk.toString('utf8');
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
  }
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      out.write(`\n[faults] process exited: code=${code} signal=${signal}\n`);
      resolve(exitInfo);
    });
  });
  const groupAlive = () => {
    try { process.kill(-child.pid!, 0); return true; } catch { return false; }
  };
  const proc: ManagedProcess = {
    name,
    pid: child.pid!,
    logFile,
    port,
    lines,
    exited,
    alive: () => exitInfo === null,
    waitForLine(match, timeoutMs = 60_000) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const w = { match, resolve: (l: LogLine) => { clearTimeout(timer); resolve(l); } };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`${name}: no matching log line within ${timeoutMs} ms (exited: ${JSON.stringify(exitInfo)}; log ${logFile})`));
        }, timeoutMs);
        waiters.push(w);
        void exited.then((info) => {
          if (waiters.includes(w)) {
            clearTimeout(timer);
            waiters.splice(waiters.indexOf(w), 1);
            reject(new Error(`${name} exited (${JSON.stringify(info)}) before the expected log line; log ${logFile}`));
          }
        });
      });
    },
    async kill9() {
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
      await exited;
      // the worker node process is a grandchild: wait until the whole group is gone
      const deadline = Date.now() + 10_000;
      while (groupAlive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      live.delete(proc);
    },
    async stop(timeoutMs = 20_000) {
      if (exitInfo === null) {
        try { process.kill(-child.pid!, 'SIGTERM'); } catch { /* gone */ }
        const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, timeoutMs);
        await exited;
        clearTimeout(timer);
      }
      const deadline = Date.now() + 10_000;
      while (groupAlive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      live.delete(proc);
      out.end();
    },
  };
  live.add(proc);
  return proc;
}

export interface WorkerEnv {
  DATABASE_URL: string;
  KAFKA_BROKERS: string;
  KAFKA_TOPIC_PREFIX: string;
  [k: string]: string;
}

/** `tsx server/main/worker.ts` with its own WORKER_METRICS_PORT; resolves once it logged "worker started". */
export async function startWorker(name: string, env: WorkerEnv, opts: { waitStarted?: boolean; timeoutMs?: number } = {}): Promise<ManagedProcess> {
  const port = await freePort();
  const proc = spawnManaged(name, ['server/main/worker.ts'], { ...FAST_SCHEDULES, ...env, WORKER_METRICS_PORT: String(port) }, port);
  if (opts.waitStarted !== false) await proc.waitForLine((l) => l.msg === 'worker started', opts.timeoutMs ?? 90_000);
  return proc;
}

/** The worker's /health (null when it does not answer). */
export async function workerHealth(proc: ManagedProcess): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${proc.port}/health`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    return null;
  }
}

/**
 * The web's API in a process of its own: test/faults/helpers/web-host.ts serves the real route
 * handlers of app/api/trpc/[trpc] and app/api/health (the code `next start` runs) on node:http.
 */
export async function startWebHost(name: string, env: WorkerEnv): Promise<ManagedProcess & { url: string }> {
  const port = await freePort();
  const proc = spawnManaged(name, ['test/faults/helpers/web-host.ts'], { ...env, WEB_HOST_PORT: String(port) }, port);
  await proc.waitForLine((l) => l.msg === 'web host listening', 90_000);
  return Object.assign(proc, { url: `http://127.0.0.1:${port}` });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
