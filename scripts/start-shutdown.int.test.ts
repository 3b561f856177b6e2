/**
 * `npm start` stops in order on Ctrl-C (issue 21): the worker first (it finishes what it holds), then
 * Kafka, then PostgreSQL, and the whole command is gone within 10 s. Runs `node scripts/start.mjs
 * --no-web` (the web needs a `next build`; it is stopped by the same code, before Kafka) with a Kafka
 * and a PostgreSQL of its own under a fresh PIN_DATA_DIR — never the shared ones — and sends SIGINT to
 * its whole process group, as a terminal's Ctrl-C does.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DATA_DIR, REPO_ROOT } from './infra/index';

const dataRoot = path.join(DATA_DIR, `start-shutdown-${randomBytes(4).toString('hex')}`);

afterAll(() => fs.rmSync(dataRoot, { recursive: true, force: true }));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address() as net.AddressInfo; s.close(() => resolve(port)); });
  });
}

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

it('Ctrl-C: worker stopped, then Kafka, then PostgreSQL; everything gone within 10 s', async () => {
  fs.mkdirSync(dataRoot, { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    JAVA_HOME: process.env.JAVA_HOME ?? '',
    PIN_DATA_DIR: dataRoot,
    WORKER_METRICS_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '3000', // the worker's deadline: what it holds past it is given up (rolled back, redelivered)
  } as unknown as NodeJS.ProcessEnv;
  // detached: start.mjs leads a process group, like a job in a terminal
  const child = spawn(process.execPath, ['scripts/start.mjs', '--no-web'], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: Date.now() })));
  try {
    const ready = await Promise.race([
      new Promise<boolean>((resolve) => {
        // the worker has joined its consumer groups (a Ctrl-C during start-up is handled too, but takes longer)
        const check = () => { if (out.includes('[start] ready without the web') && out.includes('"msg":"worker started"')) { child.stdout.off('data', check); resolve(true); } };
        child.stdout.on('data', check);
        check();
      }),
      exited.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 240_000).unref()),
    ]);
    expect(ready, out).toBe(true);

    const kafkaPid = (JSON.parse(fs.readFileSync(path.join(dataRoot, 'dev-kafka', 'kafka.pid'), 'utf8')) as { broker: number }).broker;
    const postgresPid = Number(fs.readFileSync(path.join(dataRoot, 'dev-pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(alive(kafkaPid) && alive(postgresPid)).toBe(true);

    const signalledAt = Date.now();
    process.kill(-child.pid!, 'SIGINT'); // what Ctrl-C does: SIGINT to every process of the foreground group
    const { code, at } = await exited;
    fs.writeFileSync(path.join(DATA_DIR, 'start-shutdown-last.log'), out); // for a look after a failure
    const tookMs = at - signalledAt;
    const after = out.split('\n');
    const at_ = (needle: string) => after.findIndex((l) => l.includes(needle));
    console.log(`[shutdown] npm start gone ${tookMs} ms after Ctrl-C\n${after.filter((l) => l.includes('[start] ') && /stop/.test(l)).join('\n')}`);

    expect(code, out).toBe(0);
    expect(tookMs).toBeLessThan(10_000);
    // the worker ended by its own shutdown: done, or its deadline passed with a batch still in hand
    const workerOwn = Math.max(at_('"msg":"worker stopped"'), at_('"msg":"worker shutdown deadline passed'));
    const workerDone = at_('[start] worker stopped (exited'); // not 'killed'
    const kafkaDone = at_('[start] Kafka stopped');
    const postgresDone = at_('[start] PostgreSQL stopped');
    expect(workerOwn, out).toBeGreaterThan(-1); // not SIGKILLed by npm start
    expect(workerDone).toBeGreaterThan(workerOwn);
    expect(kafkaDone).toBeGreaterThan(workerDone);
    expect(postgresDone).toBeGreaterThan(kafkaDone);
    expect(out).not.toContain('broker had already exited'); // the broker got its stop from npm start, not from the terminal
    // nothing left behind
    expect(alive(kafkaPid)).toBe(false);
    expect(alive(postgresPid)).toBe(false);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
    }
  }
}, 300_000);
