import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './infra/index';
import { platformEnvSchema } from '../server/platform/env';

/** Helpers shared by `npm start`, `npm test` and the bench: build and run web + worker as child processes. */

export function bin(name: string): string {
  return path.join(REPO_ROOT, 'node_modules', '.bin', name);
}

export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, opts: { quiet?: boolean; logFile?: string } = {}): Promise<number> {
  return new Promise((resolve) => {
    const out = opts.logFile ? fs.openSync(opts.logFile, 'a') : undefined;
    const child = spawn(cmd, args, { cwd: REPO_ROOT, env, stdio: opts.quiet || out ? ['ignore', out ?? 'ignore', out ?? 'ignore'] : 'inherit' });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

/** `next build` unless a build newer than every source file exists. */
export async function buildWeb(env: NodeJS.ProcessEnv, log: (l: string) => void, force = false): Promise<void> {
  const buildId = path.join(REPO_ROOT, '.next', 'BUILD_ID');
  if (!force && fs.existsSync(buildId) && fs.statSync(buildId).mtimeMs > newestSource()) {
    log('web build is up to date');
    return;
  }
  log('building the web app (next build) ...');
  const code = await run(bin('next'), ['build'], { ...env, NEXT_TELEMETRY_DISABLED: '1' });
  if (code !== 0) throw new Error('next build failed');
}

function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, fs.statSync(p).mtimeMs);
    }
  };
  for (const d of ['app', 'server']) if (fs.existsSync(path.join(REPO_ROOT, d))) walk(path.join(REPO_ROOT, d));
  for (const f of ['next.config.mjs', 'package.json']) newest = Math.max(newest, fs.statSync(path.join(REPO_ROOT, f)).mtimeMs);
  return newest;
}

export interface Proc {
  name: string;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL after `graceMs` (default 15 s); says which ended it */
  stop(graceMs?: number): Promise<'exited' | 'killed'>;
}

export function startProcess(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv, logFile?: string): Proc {
  const out = logFile ? fs.openSync(logFile, 'a') : undefined;
  const child = spawn(cmd, args, { cwd: REPO_ROOT, env, stdio: out ? ['ignore', out, out] : 'inherit', detached: false });
  return {
    name,
    child,
    stop: (graceMs = 15_000) =>
      new Promise<'exited' | 'killed'>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve('exited');
        let killed = false;
        const timer = setTimeout(() => { killed = true; child.kill('SIGKILL'); }, graceMs);
        child.once('exit', () => { clearTimeout(timer); resolve(killed ? 'killed' : 'exited'); });
        child.kill('SIGTERM');
      }),
  };
}

export async function waitForHttp(url: string, timeoutMs: number, log?: (l: string) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
      last = `HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  log?.(`last answer: ${last}`);
  throw new Error(`${url} did not become ready within ${timeoutMs / 1000}s (${last})`);
}

/**
 * The profile data key of a local stack (npm start, the e2e run): the web and worker run with
 * NODE_ENV=production, which requires PROFILE_DATA_KEY. Given in the environment it is used as is;
 * otherwise one is generated once into `<dataRoot>/profile-data.key` (0600) and kept, so the requisite
 * sets stored by an earlier start stay readable.
 */
export function localProfileDataKey(dataRoot: string): string {
  if (process.env.PROFILE_DATA_KEY) return process.env.PROFILE_DATA_KEY;
  const file = path.join(dataRoot, 'profile-data.key');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  fs.mkdirSync(dataRoot, { recursive: true });
  const key = crypto.randomBytes(32).toString('base64');
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/**
 * web and worker write to this terminal: readable lines for a person at a TTY, JSON when the output is
 * piped (a log shipper, a test reading it) or when LOG_FORMAT says so.
 */
export function startLogFormat(configured: string | undefined, isTTY: boolean): 'json' | 'pretty' {
  if (configured === undefined || configured === '') return isTTY ? 'pretty' : 'json';
  const parsed = platformEnvSchema.shape.LOG_FORMAT.safeParse(configured);
  if (!parsed.success) throw new Error(`invalid configuration: LOG_FORMAT ${parsed.error.issues[0]?.message} (got "${configured}")`);
  return parsed.data;
}
