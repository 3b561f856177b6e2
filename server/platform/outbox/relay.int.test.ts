import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { readTopics } from '../../../test/harness/kafka';
import { createKafka } from '../kafka/client';
import { TOPICS, withPrefix } from '../kafka/topics';
import { runJobCycle } from '../jobs/run-log';
import { createOutboxRelayJob } from './outbox-relay.job';

/** the outboxes of this system (the composition root's list, server/main/outboxes.ts) */
const OUTBOXES = ['crm', 'chessboard'];
import { writeOutbox } from './write';

let t: TestContext;
beforeAll(async () => { t = await createTestContext({ kafka: true }); });
afterAll(async () => { await t?.close(); });

const tenantId = randomUUID();
function created(bookingId: string, version: number) {
  return {
    bookingId, dealId: randomUUID(), propertyObjectId: randomUUID(), tenantId, bookingVersion: version, programId: randomUUID(),
    status: 'Reserved' as const, reserveExpiresAt: new Date(Date.now() + 3600_000).toISOString(), createdAt: new Date().toISOString(),
  };
}

describe('outbox relay', () => {
  it('publishes unpublished rows in id order with key = aggregate id and marks them after the ack', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const correlationId = randomUUID();
    const ids: string[] = [];
    for (let v = 1; v <= 3; v++) {
      for (const key of [a, b]) {
        await t.database.db.transaction(async (tx) => {
          ids.push(await writeOutbox(tx, 'crm', { topic: TOPICS.bookingCreated, aggregateType: 'Booking', aggregateId: key, tenantId, correlationId, payload: created(key, v) }));
        });
      }
    }
    const job = createOutboxRelayJob(OUTBOXES);
    const kafka = createKafka(t.env, t.logger);
    const res = await runJobCycle(job, { database: t.database, env: t.env, logger: t.logger, kafka, signal: new AbortController().signal }, 'cli');
    await job.close!();
    expect(res.status).toBe('succeeded');
    expect(res.summary.Published).toBe(6);

    const pending = await t.database.sql`SELECT count(*)::int AS n FROM crm.outbox WHERE published_at IS NULL`;
    expect(pending[0].n).toBe(0);
    const runs = await t.database.sql`SELECT job, status, summary FROM ops.job_runs WHERE run_id = ${res.runId}`;
    expect(runs[0]).toMatchObject({ job: 'outbox-relay', status: 'succeeded' });

    const got = await readTopics(kafka, [withPrefix(t.prefix, TOPICS.bookingCreated)], (all) => all.length >= 6);
    expect(got).toHaveLength(6);
    for (const key of [a, b]) {
      const versions = got.filter((m) => m.key === key).map((m) => JSON.parse(m.value!).payload.bookingVersion);
      expect(versions).toEqual([1, 2, 3]); // per-key order survives
    }
    expect(got.map((m) => m.headers.messageId).sort()).toEqual([...ids].sort());
    expect(got.every((m) => m.headers.correlationId === correlationId)).toBe(true);
  });

  it('keeps rows, counts attempts and records last_error when the broker is unreachable', async () => {
    const key = randomUUID();
    await t.database.db.transaction((tx) => writeOutbox(tx, 'crm', { topic: TOPICS.bookingCreated, aggregateType: 'Booking', aggregateId: key, tenantId, correlationId: randomUUID(), payload: created(key, 1) }));
    const job = createOutboxRelayJob(OUTBOXES);
    const deadEnv = { ...t.env, KAFKA_BROKERS: '127.0.0.1:1' };
    const kafka = createKafka(deadEnv);
    const res = await runJobCycle(job, { database: t.database, env: deadEnv, logger: t.logger, kafka, signal: new AbortController().signal }, 'cli');
    await job.close!();
    expect(res.status).toBe('failed');
    const [row] = await t.database.sql`SELECT published_at, attempts, last_error FROM crm.outbox WHERE key = ${key}`;
    expect(row.published_at).toBeNull();
    expect(row.attempts).toBeGreaterThanOrEqual(0);
    const [run] = await t.database.sql`SELECT status, error FROM ops.job_runs WHERE run_id = ${res.runId}`;
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/./);
    // the backlog is still there for the next cycle with a reachable broker
    await t.database.sql`UPDATE crm.outbox SET next_attempt_at = NULL WHERE key = ${key}`;
    const job2 = createOutboxRelayJob(OUTBOXES);
    const ok = await runJobCycle(job2, { database: t.database, env: t.env, logger: t.logger, kafka: createKafka(t.env), signal: new AbortController().signal }, 'cli');
    await job2.close!();
    expect(ok.status).toBe('succeeded');
    const [after] = await t.database.sql`SELECT published_at FROM crm.outbox WHERE key = ${key}`;
    expect(after.published_at).not.toBeNull();
  });

  it('a short batch ends the drain: the outbox is not read again only to find it empty', async () => {
    const key = randomUUID();
    for (let v = 1; v <= 3; v++) {
      await t.database.db.transaction((tx) => writeOutbox(tx, 'crm', { topic: TOPICS.bookingCreated, aggregateType: 'Booking', aggregateId: key, tenantId, correlationId: randomUUID(), payload: created(key, v) }));
    }
    // the relay's statements, counted: its reads of crm.outbox go through sql.unsafe
    const reads: string[] = [];
    const sql = new Proxy(t.database.sql, {
      get(target, prop, receiver) {
        if (prop !== 'unsafe') return Reflect.get(target, prop, receiver);
        return (text: string, ...rest: unknown[]) => {
          if (text.includes('FROM crm.outbox o')) reads.push(text);
          return (target.unsafe as (...a: unknown[]) => unknown)(text, ...rest);
        };
      },
    });
    const job = createOutboxRelayJob(OUTBOXES);
    const res = await runJobCycle(job, { database: { ...t.database, sql }, env: t.env, logger: t.logger, kafka: createKafka(t.env), signal: new AbortController().signal }, 'cli');
    await job.close!();
    expect((res.summary.Outboxes as Record<string, { published: number }>).crm.published).toBe(3);
    // 3 rows < OUTBOX_RELAY_BATCH_SIZE: one read (a row committed after it comes with its own NOTIFY, which runs one more cycle)
    expect(reads).toHaveLength(1);
    const [{ n }] = await t.database.sql`SELECT count(*)::int AS n FROM crm.outbox WHERE key = ${key} AND published_at IS NULL`;
    expect(n).toBe(0);
  });

  it('only one relay instance per outbox publishes (advisory lock); the standby is skipped', async () => {
    const first = createOutboxRelayJob(OUTBOXES);
    const second = createOutboxRelayJob(OUTBOXES);
    const kafka = createKafka(t.env);
    const deps = { database: t.database, env: t.env, logger: t.logger, kafka, signal: new AbortController().signal };
    await runJobCycle(first, deps, 'cli'); // takes and keeps the locks
    const standby = await runJobCycle(second, deps, 'cli');
    const outboxes = standby.summary.Outboxes as Record<string, { skippedLocked: boolean }>;
    expect(outboxes.crm.skippedLocked).toBe(true);
    expect(outboxes.chessboard.skippedLocked).toBe(true);
    await first.close!(); // the holder goes away: the standby takes over
    const takeover = await runJobCycle(second, deps, 'cli');
    expect((takeover.summary.Outboxes as Record<string, { skippedLocked: boolean }>).crm.skippedLocked).toBe(false);
    await second.close!();
  });
});
