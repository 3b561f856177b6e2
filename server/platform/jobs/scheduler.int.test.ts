import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../kafka/client';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { JobScheduler } from './scheduler';
import type { JobDefinition, JobSummary } from './types';

/**
 * The scheduler's pause control and its activity report: what lets an operator (and a test) bring a
 * worker to a state where nothing runs. A tick counts as in progress from its pause check to its
 * cycle's end, so "0 in progress" read after a pause committed means no cycle can start any more.
 */
let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
}

/** A job whose cycles wait for the test to let them finish. */
function gatedJob() {
  const gates: ReturnType<typeof deferred>[] = [];
  let started = 0;
  const job: JobDefinition = {
    name: 'outbox-relay',
    // never fires by itself in this test: cycles are started by runScheduled()
    schedule: () => ({ cron: '0 0 0 1 1 *', timezone: 'UTC' }),
    async run(): Promise<JobSummary> {
      started += 1;
      const gate = deferred();
      gates.push(gate);
      await gate.promise;
      return { DurationMs: 0 };
    },
  };
  return { job, gates, started: () => started };
}

const pause = (paused: boolean) => t.database.sql`INSERT INTO ops.job_controls (job, paused, changed_by, changed_at, reason)
  VALUES ('outbox-relay', ${paused}, 'test', now(), 'scheduler test') ON CONFLICT (job) DO UPDATE SET paused = ${paused}`;

describe('JobScheduler activity and pause', () => {
  it('reports a scheduled cycle as in progress until it ends, and runs nothing while the job is paused', async () => {
    const scheduler = new JobScheduler({ database: t.database, env: t.env, logger: t.logger, kafka: createKafka(t.env, t.logger, '-test') });
    const gated = gatedJob();
    const entry = scheduler.register(gated.job);
    expect(scheduler.activity()).toEqual({ ticksInProgress: 0, running: [] });

    // in progress from before the pause check (a database read) to the end of the cycle
    const first = entry.runScheduled();
    expect(scheduler.activity().ticksInProgress).toBe(1);
    for (let i = 0; i < 200 && gated.gates.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(gated.started()).toBe(1);
    expect(scheduler.activity()).toEqual({ ticksInProgress: 1, running: ['outbox-relay'] });
    gated.gates[0]!.resolve();
    expect((await first)?.status).toBe('succeeded');
    expect(scheduler.activity()).toEqual({ ticksInProgress: 0, running: [] });

    // paused: a tick (or a NOTIFY wake-up, which goes through the same call) runs no cycle
    await pause(true);
    expect(await entry.runScheduled()).toBeNull();
    expect(gated.started()).toBe(1);
    expect(scheduler.activity()).toEqual({ ticksInProgress: 0, running: [] });

    // "Run now" from the ops page still runs a paused job by hand
    const manual = entry.runNow('manual');
    for (let i = 0; i < 200 && gated.gates.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(scheduler.activity()).toEqual({ ticksInProgress: 0, running: ['outbox-relay'] });
    gated.gates[1]!.resolve();
    expect((await manual)?.status).toBe('succeeded');

    await pause(false);
    const resumed = entry.runScheduled();
    for (let i = 0; i < 200 && gated.gates.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(gated.started()).toBe(3);
    gated.gates[2]!.resolve();
    await resumed;
    await scheduler.stop();
  });
});

describe('JobScheduler wake-up (the relay NOTIFY)', () => {
  it('runs one more cycle after the one in progress, however many wake-ups arrived during it', async () => {
    const scheduler = new JobScheduler({ database: t.database, env: t.env, logger: t.logger, kafka: createKafka(t.env, t.logger, '-test') });
    const gated = gatedJob();
    const entry = scheduler.register(gated.job);
    await pause(false);

    // the cron tick's cycle is running (it may have read the outbox before the waking rows committed)
    const tick = entry.runScheduled();
    for (let i = 0; i < 200 && gated.gates.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(gated.started()).toBe(1);
    const woken = [entry.wake(), entry.wake(), entry.wake()];
    await new Promise((r) => setTimeout(r, 100));
    expect(gated.started()).toBe(1); // no overlap inside a process

    gated.gates[0]!.resolve();
    await tick;
    // skipped as an overlapping tick before: the rows that woke it waited for the next tick
    for (let i = 0; i < 200 && gated.gates.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(gated.started()).toBe(2);
    gated.gates[1]!.resolve();
    await Promise.all(woken);
    await new Promise((r) => setTimeout(r, 100));
    expect(gated.started()).toBe(2); // the three wake-ups were one cycle

    // with nothing in progress a wake-up runs a cycle at once
    const alone = entry.wake();
    for (let i = 0; i < 200 && gated.gates.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(gated.started()).toBe(3);
    gated.gates[2]!.resolve();
    await alone;
    await scheduler.stop();
  });
});
