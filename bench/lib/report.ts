import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/infra/index';
import { round, summarize, type Summary } from './stats';

/**
 * One line of the results table. A metric is either a sample (`stats`: median / p95 / p99 over the
 * measured runs or requests) or a single figure (`value`, e.g. a rate over the whole run).
 * `ratio` compares with the raw baseline named in `ratioLabel` (same data, same run).
 */
export interface Metric {
  case: string;
  metric: string;
  unit: string;
  stats?: Summary;
  value?: number;
  ratio?: number;
  ratioLabel?: string;
  /** the target in words, e.g. "≤ 2× raw SQL" */
  budget?: string;
  /** pass/fail against the target; undefined when the line is informational */
  pass?: boolean;
  note?: string;
  /**
   * Set when more than 10 % of the machine was used by others during the case (bench/run.ts): it was
   * rerun once (the figures are the rerun's); `stillBusy` when the rerun was above 10 % too — the
   * result column shows `*` then.
   */
  busy?: { rerun: boolean; notBenchShares: number[]; stillBusy: boolean };
  /** raw samples (kept in the JSON, not printed) */
  samples?: number[];
}

export function sampled(base: Omit<Metric, 'stats' | 'samples'>, samples: number[]): Metric {
  return { ...base, stats: summarize(samples), samples: samples.map((s) => round(s, 3)) };
}

const fmt = (x: number | undefined, unit = ''): string => {
  if (x === undefined || Number.isNaN(x)) return '-';
  const abs = Math.abs(x);
  const s = abs >= 1000 ? Math.round(x).toLocaleString('en-US') : abs >= 100 ? x.toFixed(0) : abs >= 10 ? x.toFixed(1) : x.toFixed(2);
  return unit ? `${s} ${unit}` : s;
};

export function formatTable(metrics: Metric[]): string {
  const header = ['case', 'metric', 'median', 'p95', 'p99', 'ratio', 'budget', 'result'];
  const rows = metrics.map((m) => [
    m.case,
    m.metric,
    fmt(m.stats?.median ?? m.value, m.unit),
    fmt(m.stats?.p95, m.stats ? m.unit : ''),
    fmt(m.stats?.p99, m.stats ? m.unit : ''),
    m.ratio === undefined ? '-' : `${m.ratio.toFixed(2)}× ${m.ratioLabel ?? ''}`.trim(),
    m.budget ?? '-',
    `${m.pass === undefined ? 'info' : m.pass ? 'PASS' : 'FAIL'}${m.busy?.stillBusy ? ' *' : m.busy?.rerun ? ' (rerun)' : ''}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export interface MachineInfo {
  hostname: string;
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  loadAverage: number[];
  node: string;
  platform: string;
}

export function machineInfo(): MachineInfo {
  return {
    hostname: os.hostname(),
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    loadAverage: os.loadavg().map((l) => round(l, 2)),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
  };
}

export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');
export const RECORDS_DIR = path.join(REPO_ROOT, 'bench', 'records');

/** The commit the bench measured (short hash, `-dirty` when the tree had uncommitted changes); undefined outside git. */
export function currentCommit(cwd = REPO_ROOT): string | undefined {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' });
  if (head.status !== 0) return undefined;
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8' });
  return `${head.stdout.trim()}${dirty.stdout.trim() ? '-dirty' : ''}`;
}

/**
 * bench/results/<timestamp>[-quick].json and bench/results/latest.json (git-ignored, with the logs);
 * a full run (not --quick: its workloads are the targets') is also its record, bench/records/<timestamp>.json,
 * meant to be committed — `npm run bench:report` renders the figures table from those records.
 */
export function writeResults(report: Record<string, unknown>, startedAt: Date, quick: boolean, dirs = { results: RESULTS_DIR, records: RECORDS_DIR }): string {
  fs.mkdirSync(dirs.results, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const file = path.join(dirs.results, `${stamp}${quick ? '-quick' : ''}.json`);
  const body = `${JSON.stringify(report, null, 2)}\n`;
  fs.writeFileSync(file, body);
  fs.writeFileSync(path.join(dirs.results, quick ? 'latest-quick.json' : 'latest.json'), body);
  if (quick) return file;
  fs.mkdirSync(dirs.records, { recursive: true });
  const record = path.join(dirs.records, `${stamp}.json`);
  fs.writeFileSync(record, body);
  return record;
}
