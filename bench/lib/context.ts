import type { BenchDatabases } from './db';
import type { Metric } from './report';
import type { BenchStack } from './stack';

export interface BenchContext {
  /** --quick: every workload divided by 10 (a smoke run) */
  quick: boolean;
  /** measured repetitions per case, after one warm-up */
  runs: number;
  /** a full-size count, divided by 10 under --quick */
  scale(n: number): number;
  adminUrl: string;
  brokers: string;
  databases: BenchDatabases;
  /** bench/results/logs/<run>: logs of the child processes */
  logDir: string;
  log(line: string): void;
  /** peak memory of the job-runner child per case (filled by hold-expiration and delisted-retention) */
  memory: Map<string, { vmHWMKiB: number; maxSampledRssKiB: number; what: string }>;
  /** web + worker for the HTTP cases, started on first use */
  stack: BenchStack;
  /** env of a worker-like process for a database and a topic prefix */
  workerEnv(databaseUrl: string, topicPrefix: string, extra?: Record<string, string>): Record<string, string>;
}

export interface BenchCase {
  name: string;
  title: string;
  /** cases whose measurements this one reports (memory reads the job cases' peaks) */
  dependsOn?: string[];
  /** left out of a run that names no case (it prepares data of its own for minutes): `npm run bench -- <name>` */
  onlyWhenNamed?: boolean;
  run(ctx: BenchContext): Promise<Metric[]>;
}
