import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLocalPostgres } from './postgres';

describe('startLocalPostgres', () => {
  it('stop() returns when the server already exited (a Ctrl-C to the process group reaches PostgreSQL too)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pin-pg-stop-'));
    fs.chmodSync(dataDir, 0o755); // initdb runs as the system user postgres when we are root
    try {
      const local = await startLocalPostgres({ dataDir: path.join(dataDir, 'pg') });
      const pid = Number(fs.readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGINT'); // what the terminal's Ctrl-C does to every process of the group
      await waitUntilGone(pid);
      const outcome = await Promise.race([
        local.stop().then(() => 'stopped'),
        new Promise((r) => setTimeout(() => r('hung'), 10_000)),
      ]);
      expect(outcome).toBe('stopped');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

async function waitUntilGone(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try { process.kill(pid, 0); } catch { return; }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`PostgreSQL pid ${pid} still running after 10 s`);
}
