/**
 * The job-runner child process of the bench (forked by agent-client.ts). It loads the worker's job
 * registry and consumers exactly as server/main/worker.ts does and runs production job definitions
 * through runJobCycle (ops.job_runs included), with the worker's pool size and an info-level JSON
 * logger on stdout (the parent writes it to a log file). Raw-SQL baselines run here too, over the
 * same pool, so both sides of a ratio pay the same client and connection costs.
 *
 * The only thing added around the job is a stopwatch on `database.db.transaction`: each timing
 * is one of the job's own transactions (a hold-expiration phase, a retention batch).
 *
 * Consumers run the same way (op `consume`): one definition from server/main/consumers.ts through the
 * worker's startConsumer, on the worker's pool, until its inbox holds the expected count.
 */
import { createJobs } from '../../server/main/jobs';
import { consumers } from '../../server/main/consumers';
import { createDatabase, type Database } from '../../server/platform/db';
import { parseEnv, type Env } from '../../server/main/env';
import { createLogger } from '../../server/platform/logger';
import { createKafka } from '../../server/platform/kafka/client';
import { startConsumer } from '../../server/platform/kafka/consumer-runner';
import { withPrefix } from '../../server/platform/kafka/topics';
import { runJobCycle } from '../../server/platform/jobs/run-log';
import type { JobDefinition, JobName } from '../../server/platform/jobs/types';
import { readProcStatus } from './proc';

export type AgentRequest =
  | { op: 'init'; env: Record<string, string> }
  | { op: 'job'; name: JobName }
  | { op: 'sql'; text: string; params?: unknown[]; untilZero?: boolean }
  | { op: 'consume'; name: string; expected: number; timeoutMs: number }
  | { op: 'memory' }
  | { op: 'close' };

export interface JobResponse {
  status: string;
  summary: Record<string, unknown>;
  error?: string;
  ms: number;
  txMs: number[];
}

export interface SqlResponse {
  ms: number;
  execMs: number[];
  rows: Record<string, unknown>[];
}

export interface ConsumeResponse {
  /** from startConsumer (connect, subscribe, group join included) until the inbox held `expected` rows */
  ms: number;
  processed: number;
}

let env: Env;
let database: Database;
let timedDb: Database;
let txMs: number[] = [];
let jobs: Record<JobName, JobDefinition>;
let logger: ReturnType<typeof createLogger>;

/** The same Database, whose db.transaction is timed. Everything else is forwarded untouched. */
function withTransactionStopwatch(d: Database): Database {
  const db = new Proxy(d.db, {
    get(target, prop) {
      if (prop === 'transaction') {
        return async (...args: Parameters<typeof target.transaction>) => {
          const t0 = performance.now();
          try {
            return await target.transaction(...args);
          } finally {
            txMs.push(performance.now() - t0);
          }
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...d, db };
}

async function handle(req: AgentRequest): Promise<unknown> {
  switch (req.op) {
    case 'init': {
      env = parseEnv({ ...process.env, ...req.env });
      logger = createLogger('worker', { level: env.LOG_LEVEL });
      database = createDatabase(env.DATABASE_URL, { max: 20, applicationName: 'pin-worker-bench' });
      timedDb = withTransactionStopwatch(database);
      jobs = createJobs();
      return { consumers: consumers.map((c) => c.name) };
    }
    case 'job': {
      txMs = [];
      const job = jobs[req.name];
      const t0 = performance.now();
      const result = await runJobCycle(job, { database: timedDb, env, logger, kafka: createKafka(env, logger, '-worker'), signal: new AbortController().signal }, 'manual');
      const ms = performance.now() - t0;
      return { status: result.status, summary: result.summary, error: result.error, ms, txMs } satisfies JobResponse;
    }
    case 'sql': {
      const execMs: number[] = [];
      const rows: Record<string, unknown>[] = [];
      const t0 = performance.now();
      for (;;) {
        const t1 = performance.now();
        const out = await database.sql.unsafe(req.text, (req.params ?? []) as never[]);
        execMs.push(performance.now() - t1);
        rows.push(...(out as unknown as Record<string, unknown>[]));
        const n = Number((out as unknown as Record<string, unknown>[])[0]?.n ?? 0);
        if (!req.untilZero || n === 0) break;
      }
      return { ms: performance.now() - t0, execMs, rows } satisfies SqlResponse;
    }
    case 'consume': {
      const def = consumers.find((c) => c.name === req.name);
      if (!def) throw new Error(`no consumer ${req.name} in server/main/consumers.ts`);
      const kafka = createKafka(env, logger, '-worker');
      const t0 = performance.now();
      const running = await startConsumer(def, { database, env, logger, kafka });
      let processed = 0;
      try {
        const deadline = Date.now() + req.timeoutMs;
        // the inbox row is written in the message's own transaction: a count of N means N messages applied
        for (;;) {
          const [row] = await database.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${def.inbox}".inbox WHERE consumer = $1`, [def.name]);
          processed = row.n;
          if (processed >= req.expected) break;
          if (Date.now() > deadline) throw new Error(`${def.name}: ${processed} of ${req.expected} messages in its inbox after ${req.timeoutMs} ms`);
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        await running.stop();
      }
      const ms = performance.now() - t0;
      // the next run starts the same group from offset 0 again (no committed offsets: fromBeginning)
      const admin = kafka.admin();
      await admin.connect();
      try {
        for (let attempt = 1; ; attempt++) {
          try {
            await admin.deleteGroups([withPrefix(env.KAFKA_TOPIC_PREFIX, def.name)]);
            break;
          } catch (e) {
            // the broker may still count the member that just left (NON_EMPTY_GROUP) for a moment
            if (attempt >= 20) throw e;
            await new Promise((r) => setTimeout(r, 500));
          }
        }
      } finally {
        await admin.disconnect();
      }
      return { ms, processed } satisfies ConsumeResponse;
    }
    case 'memory':
      return readProcStatus('self');
    case 'close': {
      for (const job of Object.values(jobs ?? {})) await job.close?.().catch(() => {});
      await database?.close();
      logger?.flush();
      setTimeout(() => process.exit(0), 50);
      return { closed: true };
    }
  }
}

process.on('message', (msg: { id: number; req: AgentRequest }) => {
  handle(msg.req).then(
    (result) => process.send!({ id: msg.id, ok: true, result }),
    (e: unknown) => process.send!({ id: msg.id, ok: false, error: e instanceof Error ? `${e.message}\n${e.stack}` : String(e) }),
  );
});
process.send!({ ready: true });
