import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { lastJobRuns } from './job-queries';

/** The jobs tab's and the overview's "last run" of each job, read per job name from the index. */

let t: TestContext;
const now = Date.now();
const ago = (minutes: number) => new Date(now - minutes * 60_000);

async function insertRun(job: string, startedAt: Date, status: string, id?: number): Promise<void> {
  const at = startedAt.toISOString();
  await t.database.sql`INSERT INTO ops.job_runs (id, job, run_id, started_at, finished_at, status, summary)
    VALUES (coalesce(${id ?? null}::bigint, nextval(pg_get_serial_sequence('ops.job_runs', 'id'))), ${job}, ${randomUUID()}, ${at},
      ${status === 'running' ? null : at}, ${status}, '{"Total":1}'::jsonb)`;
}

beforeAll(async () => {
  t = await createTestContext();
  await t.database.sql`DELETE FROM ops.job_runs`;
  await insertRun('reconciliation', ago(180), 'succeeded');
  await insertRun('reconciliation', ago(120), 'succeeded');
  await insertRun('reconciliation', ago(60), 'failed');
  await insertRun('reconciliation', ago(10), 'running');
  await insertRun('booking-expiration', ago(5), 'failed');
  // two runs started in the same millisecond: the later id is the last one
  await insertRun('delisted-retention', ago(30), 'skipped', 900_001);
  await insertRun('delisted-retention', ago(30), 'succeeded', 900_002);
  await insertRun('a-retired-job', ago(1), 'succeeded');
});

afterAll(async () => {
  await t?.close();
});

describe('lastJobRuns', () => {
  it("gives each job's latest run and its latest success, and nothing for a job that never ran", async () => {
    const runs = await lastJobRuns(t.database.db);
    expect(runs.get('reconciliation')).toMatchObject({ last: { status: 'running', startedAt: ago(10) }, lastSucceededAt: ago(120) });
    expect(runs.get('booking-expiration')).toMatchObject({ last: { status: 'failed', startedAt: ago(5) }, lastSucceededAt: null });
    expect(runs.get('delisted-retention')).toMatchObject({ last: { id: 900_002, status: 'succeeded' }, lastSucceededAt: ago(30) });
    expect(runs.has('outbox-relay')).toBe(false);
    // the jobs of the system only, unless asked for another name
    expect(runs.has('a-retired-job')).toBe(false);
    expect((await lastJobRuns(t.database.db, ['a-retired-job'])).get('a-retired-job')?.last.status).toBe('succeeded');
  });
});
