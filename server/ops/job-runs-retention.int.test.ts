import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../platform/kafka/client';
import { runJobCycle } from '../platform/jobs/run-log';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { reconciliationJob } from './reconciliation.job';

/** The run history (ops.job_runs) is kept JOB_RUNS_RETENTION_MS and pruned by the reconciliation job's cycles. */

const DAY = 24 * 3600_000;
let t: TestContext;

async function insertRun(job: string, ageDays: number, status: string): Promise<string> {
  const runId = randomUUID();
  const at = new Date(Date.now() - ageDays * DAY).toISOString();
  await t.database.sql`INSERT INTO ops.job_runs (job, run_id, started_at, finished_at, status, summary)
    VALUES (${job}, ${runId}, ${at}, ${status === 'running' ? null : at}, ${status}, '{}'::jsonb)`;
  return runId;
}

beforeAll(async () => {
  t = await createTestContext({ env: { JOB_RUNS_RETENTION_MS: String(7 * DAY) } });
});

afterAll(async () => {
  await t?.close();
});

describe('job run retention', () => {
  it('a reconciliation cycle deletes the finished runs older than N days (here 7), keeps the younger ones and a run still going', async () => {
    await t.database.sql`DELETE FROM ops.job_runs`;
    const old = [
      await insertRun('booking-expiration', 8, 'succeeded'),
      await insertRun('outbox-relay', 30, 'failed'),
      await insertRun('delisted-retention', 400, 'skipped'),
    ];
    const kept = [
      await insertRun('booking-expiration', 6.9, 'succeeded'),
      await insertRun('reconciliation', 1, 'failed'),
      // a cycle that has not recorded its end is kept: the history must not lose a run in progress
      await insertRun('delisted-retention', 9, 'running'),
    ];

    const result = await runJobCycle(reconciliationJob, { database: t.database, env: t.env, logger: t.logger, kafka: createKafka(t.env), signal: new AbortController().signal }, 'manual');
    expect(result.status).toBe('succeeded');
    expect(result.summary.DeletedJobRuns).toBe(old.length);

    const left = (await t.database.sql<{ run_id: string }[]>`SELECT run_id FROM ops.job_runs`).map((r) => r.run_id);
    expect(left).toEqual(expect.arrayContaining([...kept, result.runId]));
    expect(left).toHaveLength(kept.length + 1);

    const again = await runJobCycle(reconciliationJob, { database: t.database, env: t.env, logger: t.logger, kafka: createKafka(t.env), signal: new AbortController().signal }, 'manual');
    expect(again.summary.DeletedJobRuns).toBe(0);
  });
});
