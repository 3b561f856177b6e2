import { fork, type ChildProcess } from 'node:child_process';
import { DATA_DIR } from '../../scripts/infra/index';
import { localProfileDataKey } from '../../scripts/stack';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentRequest, ConsumeResponse, JobResponse, SqlResponse } from './agent';
import { readProcStatus } from './proc';
import type { JobName } from '../../server/platform/jobs/types';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'agent.ts');

/**
 * Parent side of the job-runner child: `node --import tsx bench/lib/agent.ts` (one node process, so
 * its pid is the process whose memory is measured). The parent samples /proc/<pid>/status every
 * 100 ms (VmRSS) and reads VmHWM, the kernel's own peak-RSS counter, whenever asked.
 */
export class Agent {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly sampler: NodeJS.Timeout;
  /** max VmRSS seen by the sampler (KiB); VmHWM is the exact peak */
  maxSampledRssKiB = 0;

  private constructor(private readonly child: ChildProcess, readonly name: string) {
    child.on('message', (msg: { id?: number; ok?: boolean; result?: unknown; error?: string }) => {
      if (msg.id === undefined) return;
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new Error(`agent ${name}: ${msg.error}`));
    });
    child.on('exit', (code, signal) => {
      for (const p of this.pending.values()) p.reject(new Error(`agent ${name} exited (${code ?? signal})`));
      this.pending.clear();
    });
    this.sampler = setInterval(() => {
      try {
        this.maxSampledRssKiB = Math.max(this.maxSampledRssKiB, readProcStatus(child.pid!).vmRSSKiB);
      } catch { /* exited */ }
    }, 100);
    this.sampler.unref();
  }

  static async start(name: string, env: Record<string, string>, logFile: string): Promise<Agent> {
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    const out = fs.openSync(logFile, 'a');
    const child = fork(AGENT, [], {
      // BENCH_CPU_PROF=<dir>: a V8 CPU profile of each job-runner child (open it in Chrome DevTools)
      execArgv: ['--import', 'tsx', ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])],
      stdio: ['ignore', out, out, 'ipc'],
      env: { ...process.env, NODE_ENV: 'production', PROFILE_DATA_KEY: localProfileDataKey(DATA_DIR) },
    });
    fs.closeSync(out);
    await new Promise<void>((resolve, reject) => {
      const onMsg = (m: { ready?: boolean }) => { if (m.ready) { child.off('message', onMsg); resolve(); } };
      child.on('message', onMsg);
      child.once('exit', (code) => reject(new Error(`agent ${name} exited during start (${code}); see ${logFile}`)));
    });
    const agent = new Agent(child, name);
    await agent.call({ op: 'init', env });
    return agent;
  }

  get pid(): number {
    return this.child.pid!;
  }

  call<T = unknown>(req: AgentRequest): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, req });
    });
  }

  job(name: JobName): Promise<JobResponse> {
    return this.call<JobResponse>({ op: 'job', name });
  }

  /** Runs the consumer `name` (server/main/consumers.ts) through the worker's runner until its inbox holds `expected` messages. */
  consume(name: string, expected: number, timeoutMs = 600_000): Promise<ConsumeResponse> {
    return this.call<ConsumeResponse>({ op: 'consume', name, expected, timeoutMs });
  }

  sql(text: string, params: unknown[] = [], untilZero = false): Promise<SqlResponse> {
    return this.call<SqlResponse>({ op: 'sql', text, params, untilZero });
  }

  /** VmHWM (peak RSS since the process started) and the current VmRSS, in KiB, read from /proc. */
  memory(): { vmHWMKiB: number; vmRSSKiB: number } {
    return readProcStatus(this.child.pid!);
  }

  async stop(): Promise<void> {
    clearInterval(this.sampler);
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    await this.call({ op: 'close' }).catch(() => {});
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
