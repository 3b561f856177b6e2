import { createJobs, JOB_NAMES, type JobName } from '../server/main/jobs';
import { createDatabase } from '../server/platform/db';
import { loadEnv } from '../server/main/env';
import { createLogger } from '../server/platform/logger';
import { createKafka } from '../server/platform/kafka/client';
import { runJobCycle } from '../server/platform/jobs/run-log';

/**
 * `npm run job -- <name> --once`: one cycle of a named job; its summary is the last stdout line (JSON).
 * Logs go to stderr so stdout stays machine-readable. Exit 2 on a usage error, 1 if the cycle failed.
 */
async function main(): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  const name = args.find((a) => !a.startsWith('--'));
  if (!name || !args.includes('--once')) {
    console.error(`usage: npm run job -- <name> --once\njobs: ${JOB_NAMES.join(', ')}`);
    return 2;
  }
  if (!(JOB_NAMES as readonly string[]).includes(name)) {
    console.error(`unknown job "${name}"; jobs: ${JOB_NAMES.join(', ')}`);
    return 2;
  }
  const env = loadEnv();
  const logger = createLogger('job-cli', { level: env.LOG_LEVEL, format: env.LOG_FORMAT, destination: (await import('pino')).default.destination(2) });
  const database = createDatabase(env.DATABASE_URL, { max: 5, applicationName: `pin-job-${name}` });
  const job = createJobs()[name as JobName];
  const signal = new AbortController();
  process.once('SIGINT', () => signal.abort());
  process.once('SIGTERM', () => signal.abort());
  try {
    const result = await runJobCycle(job, { database, env, logger, kafka: createKafka(env, logger, '-cli'), signal: signal.signal }, 'cli');
    process.stdout.write(`${JSON.stringify({ job: name, runId: result.runId, status: result.status, ...result.summary, ...(result.error ? { error: result.error } : {}) })}\n`);
    return result.status === 'failed' ? 1 : 0;
  } finally {
    await job.close?.();
    logger.flush();
    await database.close();
  }
}

main().then((code) => process.exit(code), (e) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
