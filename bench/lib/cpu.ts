import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * CPU time per process group over a window, from /proc/<pid>/stat: who used the machine's cores while a
 * case ran. Processes descending from the bench are labelled by what they are (web, worker, postgres,
 * kafka, chromium, bench); on shared infrastructure the PostgreSQL backends of the bench's `pinbench_*`
 * databases are the bench's too; everything else is "not the bench" (on a shared machine: other people's
 * work competing for the same cores).
 *
 * A process that ends inside the window is no longer in /proc at its end, so its CPU would be lost — and
 * counted as others' work. Two things keep it:
 * - every open window samples the process table about once a second (in a worker thread) and keeps the
 *   last seen CPU of each process, so a process that ends is counted up to its last sample (the only way for a backend of the
 *   shared PostgreSQL: its postmaster, not the bench, reaps it, and also reaps everyone else's);
 * - for a process the bench's own processes reap (a backend of the bench's embedded PostgreSQL, reaped by
 *   its postmaster; a stopped worker under tsx; chromium's renderers) the reaper's cutime + cstime grow by
 *   the child's whole CPU when it is reaped, which gives the exact total: what the samples missed (the
 *   time after the last sample, a process that lived less than a second) is added from it.
 * Threads need nothing: a process's utime/stime include its ended threads (Kafka's, V8's).
 */
export interface Proc {
  pid: number;
  ppid: number;
  /** utime + stime, clock ticks */
  ticks: number;
  /** cutime + cstime: CPU of the children this process has reaped (with theirs), clock ticks */
  childTicks: number;
  comm: string;
  cmd: string;
}
export type ProcTable = Map<number, Proc>;

const HZ = 100; // USER_HZ on Linux
const SAMPLE_EVERY_MS = 1000;
export const NOT_THE_BENCH = 'not the bench';

/**
 * Reads every process's /proc/<pid>/stat (and its command line, re-read only while it can still change
 * meaningfully: a process that exec'd changes its comm; a PostgreSQL backend shows the postmaster's command
 * line until it has read the startup packet, then `postgres: user database host …`, whose database stays).
 * Plain JavaScript in a string because it runs in two places: here at a window's edges, and in the sampler's
 * worker thread (`eval: true`, no TypeScript loader there). Synchronous on purpose: ~7 ms of CPU for 160
 * processes where the same reads through fs.promises cost ~28 ms.
 */
const READ_PROC_TABLE = `
const cmdCache = new Map();
function readProcTable(fs) {
  const out = [];
  const alive = new Set();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\\d+$/.test(entry)) continue;
    const pid = Number(entry);
    alive.add(pid);
    try {
      const stat = fs.readFileSync('/proc/' + entry + '/stat', 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      let c = cmdCache.get(pid);
      if (!c || c.comm !== comm || (comm === 'postgres' && !c.cmd.startsWith('postgres: '))) {
        c = { comm, cmd: fs.readFileSync('/proc/' + entry + '/cmdline', 'utf8').replace(/\\0/g, ' ') };
        cmdCache.set(pid, c);
      }
      out.push({ pid, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), childTicks: Number(f[13]) + Number(f[14]), comm, cmd: c.cmd });
    } catch { /* gone */ }
  }
  for (const pid of cmdCache.keys()) if (!alive.has(pid)) cmdCache.delete(pid);
  return out;
}`;

const toTable = (procs: Proc[]): ProcTable => new Map(procs.map((p) => [p.pid, p]));
const readProcs = new Function('fs', `${READ_PROC_TABLE}\nreturn () => readProcTable(fs);`)(fs) as () => Proc[];
const readProcTable = (): ProcTable => toTable(readProcs());

/** What a process is, seen from the bench whose pid is benchPid, in the table it was seen in. */
export function label(p: Proc, all: ProcTable, benchPid: number): string {
  let x: Proc | undefined = p;
  let ours = false;
  for (let depth = 0; x && depth < 30; depth++) {
    if (x.pid === benchPid) { ours = true; break; }
    x = all.get(x.ppid);
  }
  if (!ours) {
    // shared infrastructure (DATABASE_URL / KAFKA_BROKERS): a PostgreSQL backend serves one database, so
    // the bench's are named by it; a parallel worker works for its leader; the broker and PostgreSQL's
    // own processes serve everyone
    if (p.cmd.startsWith('postgres: ')) {
      if (p.cmd.includes('pinbench_')) return 'postgres';
      const leader = /parallel worker for PID (\d+)/.exec(p.cmd);
      if (leader) {
        const l = all.get(Number(leader[1]));
        return l && l.pid !== p.pid && l.cmd.includes('pinbench_') ? 'postgres' : NOT_THE_BENCH;
      }
      return /^postgres: \S+ \S+ /.test(p.cmd) && !/^postgres: (autovacuum|logical|background|walwriter|checkpointer|io worker)/.test(p.cmd)
        ? NOT_THE_BENCH : 'postgres (shared)';
    }
    if (p.cmd.includes('kafka.Kafka')) return 'kafka (shared)';
    return NOT_THE_BENCH;
  }
  if (p.pid === benchPid) return 'bench (load generator)';
  if (p.comm === 'postgres' || p.cmd.includes('postgres')) return 'postgres';
  if (p.cmd.includes('kafka.Kafka')) return 'kafka';
  if (p.cmd.includes('ProducerPerformance')) return 'ProducerPerformance';
  if (/chrom/i.test(p.comm)) return 'chromium';
  if (p.cmd.includes('web-server.ts')) return 'web';
  if (p.cmd.includes('worker.ts')) return 'worker';
  if (p.cmd.includes('agent.ts')) return 'job runner';
  if (p.comm.startsWith('next') || p.cmd.includes('next')) return 'web';
  return 'bench (other)';
}

/** A process as last seen during a window, with what it was then. */
export interface Seen extends Proc { group: string }

/** Adds a table's processes to what a window has seen (the later sight of a pid replaces the earlier). */
export function observe(seen: Map<number, Seen>, table: ProcTable, benchPid: number): void {
  for (const p of table.values()) seen.set(p.pid, { ...p, group: label(p, table, benchPid) });
}

/**
 * CPU seconds per group over a window: `start` and `end` are the process tables at its edges, `seen`
 * every process observed in it (the edges and the samples between). A process alive at both edges used
 * end − start; one that ended used its last sighting − start (0 when born inside); and for every bench
 * process alive at the end, what its reaped children used in the window beyond their samples (its
 * cutime + cstime growth, less what those children had used before the window) goes to their group.
 */
export function cpuByGroup(start: ProcTable, seen: Map<number, Seen>, end: ProcTable, benchPid: number): Record<string, number> {
  const byGroup: Record<string, number> = {};
  const add = (g: string, ticks: number) => { if (ticks > 0) byGroup[g] = (byGroup[g] ?? 0) + ticks / HZ; };
  const endSeen = new Map<number, Seen>();
  observe(endSeen, end, benchPid);
  for (const p of endSeen.values()) add(p.group, p.ticks - (start.get(p.pid)?.ticks ?? 0));
  const ended = [...seen.values()].filter((s) => !endSeen.has(s.pid));
  for (const s of ended) add(s.group, s.ticks - (start.get(s.pid)?.ticks ?? 0));
  // an ended process's CPU went to the nearest ancestor that reaped it: its parent, or the parent's
  // reaper if the parent ended too (an orphan goes to init and is lost, but for its samples)
  const endedByPid = new Map(ended.map((s) => [s.pid, s]));
  const reaperOf = (s: Seen): number | undefined => {
    let ppid = s.ppid;
    for (let depth = 0; depth < 30; depth++) {
      if (endSeen.has(ppid)) return ppid;
      const parent = endedByPid.get(ppid);
      if (!parent) return undefined;
      ppid = parent.ppid;
    }
    return undefined;
  };
  const reaped = new Map<number, Seen[]>();
  for (const s of ended) {
    const r = reaperOf(s);
    if (r !== undefined) reaped.set(r, [...(reaped.get(r) ?? []), s]);
  }
  for (const reaper of endSeen.values()) {
    if (reaper.group === NOT_THE_BENCH || reaper.group.endsWith('(shared)')) continue; // reaps everyone's
    const grown = reaper.childTicks - (start.get(reaper.pid)?.childTicks ?? 0);
    if (grown <= 0) continue;
    const children = reaped.get(reaper.pid) ?? [];
    // what those children had used before the window is in the growth too
    const before = children.reduce((n, c) => n + (start.get(c.pid)?.ticks ?? 0) + (start.get(c.pid)?.childTicks ?? 0), 0);
    const sampled = children.reduce((n, c) => n + Math.max(0, c.ticks - (start.get(c.pid)?.ticks ?? 0)), 0);
    const biggest = children.sort((a, b) => (b.ticks - (start.get(b.pid)?.ticks ?? 0)) - (a.ticks - (start.get(a.pid)?.ticks ?? 0)))[0];
    add(biggest?.group ?? reaper.group, grown - before - sampled);
  }
  return byGroup;
}

/** Busy CPU seconds of the whole machine since boot (all cores, /proc/stat: everything but idle and iowait). */
function machineBusySeconds(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return (user + nice + system + irq + softirq + (steal ?? 0)) / HZ;
}

export interface CpuUse {
  wallS: number;
  cores: number;
  machineBusyS: number;
  byGroup: Record<string, number>;
  /**
   * CPU seconds that were not the bench: the machine's busy time minus what the bench's processes used
   * (including those that ended inside the window). Unlike the "not the bench" group, this includes
   * short-lived processes of others (a tsc or vitest run) that ended between two samples.
   */
  notBenchS: number;
  /** notBenchS as a share of the window's capacity (wall × cores) */
  notBenchShare: number;
  summary: string;
}

/** The open windows' sightings; one sampler serves all of them (the run's, the case's, a measurement's). */
const openWindows = new Set<Map<number, Seen>>();
let sampler: Worker | undefined;

/** A worker thread reads the table every SAMPLE_EVERY_MS: the load generator's event loop is not held by it. */
function startSampling(): void {
  if (sampler) return;
  sampler = new Worker(`
    const fs = require('node:fs');
    const { parentPort } = require('node:worker_threads');
    ${READ_PROC_TABLE}
    setInterval(() => parentPort.postMessage(readProcTable(fs)), ${SAMPLE_EVERY_MS});`, { eval: true });
  sampler.on('message', (procs: Proc[]) => {
    const table = toTable(procs);
    for (const seen of openWindows) observe(seen, table, process.pid);
  });
  sampler.on('error', () => { /* samples stop: the edges and the reapers' totals still count */ });
  sampler.unref();
}

function stopSampling(): void {
  if (openWindows.size > 0 || !sampler) return;
  void sampler.terminate();
  sampler = undefined;
}

export function cpuWindow(): () => CpuUse {
  const start = readProcTable();
  const seen = new Map<number, Seen>();
  observe(seen, start, process.pid);
  openWindows.add(seen);
  startSampling();
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  return () => {
    const end = readProcTable();
    openWindows.delete(seen);
    stopSampling();
    const machineBusyS = machineBusySeconds() - busy0;
    const wallS = (performance.now() - t0) / 1000;
    const byGroup = cpuByGroup(start, seen, end, process.pid);
    const cores = os.availableParallelism?.() ?? os.cpus().length;
    const parts = Object.entries(byGroup).sort((a, b) => b[1] - a[1]).map(([g, s]) => `${g} ${s.toFixed(1)} s`);
    const share = (100 * machineBusyS) / (wallS * cores);
    const benchS = Object.entries(byGroup).filter(([g]) => g !== NOT_THE_BENCH).reduce((n, [, s]) => n + s, 0);
    const notBenchS = Math.max(0, machineBusyS - benchS);
    const notBenchShare = notBenchS / (wallS * cores);
    return {
      wallS, cores, machineBusyS, byGroup, notBenchS, notBenchShare,
      summary: `CPU over ${wallS.toFixed(0)} s × ${cores} cores: machine ${share.toFixed(0)}% busy, ${(100 * notBenchShare).toFixed(0)}% not the bench; ${parts.join(', ')} (processes that ended inside the window included)`,
    };
  };
}
