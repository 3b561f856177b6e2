import fs from 'node:fs';

/** VmHWM (the kernel's peak resident set since the process started) and VmRSS of a process, in KiB. */
export function readProcStatus(pid: number | 'self'): { vmHWMKiB: number; vmRSSKiB: number } {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { vmHWMKiB: kib('VmHWM'), vmRSSKiB: kib('VmRSS') };
}
