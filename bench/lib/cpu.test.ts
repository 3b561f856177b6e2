import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';
import { dropDatabase, ensureDatabase } from '../../scripts/infra';
import { cpuByGroup, cpuWindow, NOT_THE_BENCH, observe, type Proc, type ProcTable, type Seen } from './cpu';

const BENCH = 100;
const table = (...procs: Partial<Proc>[]): ProcTable =>
  new Map(procs.map((p) => [p.pid!, { ppid: 1, ticks: 0, childTicks: 0, comm: 'x', cmd: '', ...p } as Proc]));
const seenIn = (...tables: ProcTable[]) => {
  const seen = new Map<number, Seen>();
  for (const t of tables) observe(seen, t, BENCH);
  return seen;
};

describe('cpuByGroup: processes that end inside the window', () => {
  it('counts a backend of a shared PostgreSQL serving a pinbench_ database up to its last sample, and others\' as not the bench', () => {
    const postmaster = { pid: 500, comm: 'postgres', cmd: '/usr/lib/postgresql/bin/postgres -D /data' };
    const bench = { pid: BENCH, cmd: 'node bench/run.ts' };
    const start = table(bench, { ...postmaster, childTicks: 9000 }, { pid: 600, ppid: 500, comm: 'postgres', cmd: 'postgres: postgres pinbench_x_1 127.0.0.1(5) idle', ticks: 50 });
    const sample = table(bench, postmaster,
      { pid: 600, ppid: 500, comm: 'postgres', cmd: 'postgres: postgres pinbench_x_1 127.0.0.1(5) idle', ticks: 150 },
      { pid: 601, ppid: 500, comm: 'postgres', cmd: 'postgres: postgres otherdb 127.0.0.1(6) SELECT', ticks: 300 },
      { pid: 602, ppid: 500, comm: 'postgres', cmd: 'postgres: parallel worker for PID 600', ticks: 40 });
    // the shared postmaster reaped all three (and more of others'): its growth is not the bench's
    const end = table(bench, { ...postmaster, childTicks: 20000 });
    const byGroup = cpuByGroup(start, seenIn(start, sample), end, BENCH);
    expect(byGroup.postgres).toBeCloseTo(1.0 + 0.4);
    expect(byGroup[NOT_THE_BENCH]).toBeCloseTo(3.0);
  });

  it('counts what a bench process reaped exactly: the samples, plus the reaper\'s cutime growth beyond them, less what its children used before the window', () => {
    const bench = { pid: BENCH, cmd: 'node bench/run.ts' };
    const postmaster = { pid: 700, ppid: BENCH, comm: 'postgres', cmd: '/x/native/bin/postgres -D .data/bench-pg' };
    const backend = { pid: 701, ppid: 700, comm: 'postgres', cmd: 'postgres: postgres pinbench_y 127.0.0.1(7) idle' };
    const start = table(bench, { ...postmaster, ticks: 10, childTicks: 5000 }, { ...backend, ticks: 1000, childTicks: 0 });
    const sample = table(bench, { ...postmaster, ticks: 20, childTicks: 5000 }, { ...backend, ticks: 1100 });
    // the backend ended at 1250 ticks (150 after the sample), and one that lived between two samples used 300
    const end = table(bench, { ...postmaster, ticks: 30, childTicks: 5000 + 1250 + 300 });
    const byGroup = cpuByGroup(start, seenIn(start, sample), end, BENCH);
    expect(byGroup.postgres).toBeCloseTo(0.2 + 2.5 + 3.0);
    expect(byGroup[NOT_THE_BENCH]).toBeUndefined();
  });
});

describe('cpuWindow on this machine', () => {
  it('counts a grandchild that ends inside the window, reaped by a child that is still alive at its end, as the bench\'s', async () => {
    const window = cpuWindow();
    // sh waits for node (so node's CPU lands in sh's cutime), then lives on past the window's end
    const burn = 'const t = Date.now(); let x = 0; while (Date.now() - t < 600) x++; console.log("burnt", x > 0)';
    const sh = spawn('sh', ['-c', `node -e '${burn}'; sleep 5`], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => sh.stdout.on('data', (d: Buffer) => { if (d.toString().includes('burnt')) resolve(); }));
      await sleep(300); // node has exited and been reaped by sh
      const use = window();
      const benchChildrenS = Object.entries(use.byGroup).filter(([g]) => g !== NOT_THE_BENCH && g !== 'bench (load generator)').reduce((n, [, s]) => n + s, 0);
      // node used ~0.6 s of CPU (less if the machine is busy: it spins on the clock, not on a count)
      expect(benchChildrenS).toBeGreaterThan(0.25);
    } finally {
      sh.kill();
    }
  });

  it('counts a backend of a pinbench_ database that ends inside the window as the bench\'s postgres', async () => {
    const adminUrl = inject('adminDatabaseUrl');
    const name = `pinbench_cputest_${randomBytes(3).toString('hex')}`;
    const url = await ensureDatabase(adminUrl, name);
    try {
      const window = cpuWindow();
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      await sql`SELECT count(*) FROM generate_series(1, 3000000)`;
      await sleep(1500); // at least one sample sees the backend after its work
      await sql.end();
      await sleep(300); // the backend has exited
      const use = window();
      expect(use.byGroup.postgres ?? 0).toBeGreaterThan(0.2);
    } finally {
      await dropDatabase(adminUrl, name);
    }
  });
});
