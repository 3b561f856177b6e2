import fs from 'node:fs';
import os from 'node:os';

/**
 * CPU time per process group over a window, from /proc/<pid>/stat (utime + stime): who used the
 * machine's cores while a case ran. Processes descending from the bench are labelled by what they
 * are (web, worker, postgres, kafka, chromium, bench); everything else is "not the bench" (on a
 * shared machine: other people's work competing for the same cores).
 */
interface Proc { pid: number; ppid: number; ticks: number; comm: string; cmd: string }

const HZ = 100; // USER_HZ on Linux

function readAll(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out.set(Number(entry), { pid: Number(entry), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), comm, cmd });
    } catch { /* gone */ }
  }
  return out;
}

function label(p: Proc, all: Map<number, Proc>): string {
  let x: Proc | undefined = p;
  let ours = false;
  for (let depth = 0; x && depth < 30; depth++) {
    if (x.pid === process.pid) { ours = true; break; }
    x = all.get(x.ppid);
  }
  if (!ours) {
    // shared infrastructure (DATABASE_URL / KAFKA_BROKERS): a PostgreSQL backend serves one database, so
    // the bench's are named by it; the broker and PostgreSQL's own processes serve everyone
    if (p.cmd.startsWith('postgres: ')) {
      if (p.cmd.includes('pinbench_')) return 'postgres';
      return /^postgres: \S+ \S+ /.test(p.cmd) && !/^postgres: (autovacuum|logical|background|walwriter|checkpointer|io worker)/.test(p.cmd)
        ? 'not the bench' : 'postgres (shared)';
    }
    if (p.cmd.includes('kafka.Kafka')) return 'kafka (shared)';
    return 'not the bench';
  }
  if (p.pid === process.pid) return 'bench (load generator)';
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

/** Busy CPU seconds of the whole machine since boot (all cores, /proc/stat: everything but idle and iowait). */
function machineBusySeconds(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return (user + nice + system + irq + softirq + (steal ?? 0)) / HZ;
}

/** CPU seconds of the bench's children that have exited and been reaped (cutime + cstime of this process). */
function reapedChildrenSeconds(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / HZ;
}

export interface CpuUse {
  wallS: number;
  cores: number;
  machineBusyS: number;
  byGroup: Record<string, number>;
  /**
   * CPU seconds that were not the bench: the machine's busy time minus what the bench's processes used
   * (those alive at the end, and its children reaped during the window). Unlike the "not the bench"
   * group, this includes short-lived processes of others (a tsc or vitest run) that ended inside it.
   */
  notBenchS: number;
  /** notBenchS as a share of the window's capacity (wall × cores) */
  notBenchShare: number;
  summary: string;
}

export function cpuWindow(): () => CpuUse {
  const before = readAll();
  const reaped0 = reapedChildrenSeconds();
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  return () => {
    const after = readAll();
    const machineBusyS = machineBusySeconds() - busy0;
    const wallS = (performance.now() - t0) / 1000;
    const byGroup: Record<string, number> = {};
    for (const p of after.values()) {
      const used = (p.ticks - (before.get(p.pid)?.ticks ?? 0)) / HZ;
      if (used <= 0) continue;
      const g = label(p, after);
      byGroup[g] = (byGroup[g] ?? 0) + used;
    }
    const cores = os.availableParallelism?.() ?? os.cpus().length;
    const parts = Object.entries(byGroup).sort((a, b) => b[1] - a[1]).map(([g, s]) => `${g} ${s.toFixed(1)} s`);
    const share = (100 * machineBusyS) / (wallS * cores);
    const benchS = Object.entries(byGroup).filter(([g]) => g !== 'not the bench').reduce((n, [, s]) => n + s, 0) + (reapedChildrenSeconds() - reaped0);
    const notBenchS = Math.max(0, machineBusyS - benchS);
    const notBenchShare = notBenchS / (wallS * cores);
    return {
      wallS, cores, machineBusyS, byGroup, notBenchS, notBenchShare,
      summary: `CPU over ${wallS.toFixed(0)} s × ${cores} cores: machine ${share.toFixed(0)}% busy, ${(100 * notBenchShare).toFixed(0)}% not the bench; ${parts.join(', ')} (processes alive at the end)`,
    };
  };
}
