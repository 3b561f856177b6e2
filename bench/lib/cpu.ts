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
  if (!ours) return 'not the bench';
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

export function cpuWindow(): () => { wallS: number; cores: number; machineBusyS: number; byGroup: Record<string, number>; summary: string } {
  const before = readAll();
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
    return {
      wallS, cores, machineBusyS, byGroup,
      summary: `CPU over ${wallS.toFixed(0)} s × ${cores} cores: machine ${share.toFixed(0)}% busy; ${parts.join(', ')} (processes alive at the end)`,
    };
  };
}
