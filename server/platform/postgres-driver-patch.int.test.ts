import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { connectPostgres } from './db';

/**
 * patches/postgres+3.4.9.patch (porsager/postgres#1208, fix proposed upstream in #1209, applied by
 * patch-package on install): a write to a connection whose backend died
 * is rejected with CONNECTION_CLOSED to its caller — unpatched, postgres.js 3.4.9 throws a TypeError
 * from a setImmediate (`socket.write` on null) that no try/catch sees and that ends the process.
 * A reserved connection is the deterministic trigger: it is pinned, so nothing rotates it away.
 */
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

describe('postgres.js patch (porsager/postgres#1208)', () => {
  it('a query on a reserved connection whose backend was terminated rejects with CONNECTION_CLOSED, nothing is thrown outside it', async () => {
    const closes = closeWatch();
    const client = connectPostgres(t.env.DATABASE_URL, { max: 2, applicationName: 'pin-test-driver-patch', onclose: closes.onclose });
    const uncaught = collectUncaught();
    try {
      const reserved = await client.reserve();
      const [{ pid }] = await reserved<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      const closed = closes.next();
      await t.database.sql`SELECT pg_terminate_backend(${pid})`;
      await closed; // the client has seen its socket close (a fixed sleep lost this race on a busy machine)
      const error = await reserved`SELECT 1`.then(() => null, (e: unknown) => e as { code?: string });
      await new Promise((r) => setTimeout(r, 100)); // a scheduled write would have run by now
      expect(uncaught.errors).toEqual([]);
      expect(error?.code).toBe('CONNECTION_CLOSED');
    } finally {
      uncaught.stop();
      await client.end({ timeout: 1 }).catch(() => {});
    }
  });

  it('a transaction whose backend dies mid-way rejects to its caller, and the pool serves the next query', async () => {
    const closes = closeWatch();
    const client = connectPostgres(t.env.DATABASE_URL, { max: 1, applicationName: 'pin-test-driver-patch-tx', onclose: closes.onclose });
    const uncaught = collectUncaught();
    try {
      const failed = await client.begin(async (tx) => {
        const [{ pid }] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
        const closed = closes.next();
        await t.database.sql`SELECT pg_terminate_backend(${pid})`;
        // the next statement is written only once the client has seen the socket close: written while the
        // close is still on its way it races the driver's own reconnect (a different case, see docs/decisions/0012-patched-dependencies.md)
        await closed;
        await tx`SELECT 2`;
      }).then(() => null, (e: unknown) => e as { code?: string });
      await new Promise((r) => setTimeout(r, 100));
      expect(failed?.code).toMatch(/^CONNECTION_(CLOSED|DESTROYED)$|^57P01$/);
      const [{ one }] = await client<{ one: number }[]>`SELECT 1 AS one`;
      expect(one).toBe(1);
      expect(uncaught.errors).toEqual([]);
    } finally {
      uncaught.stop();
      await client.end({ timeout: 1 }).catch(() => {});
    }
  });
});

describe('postgres.js transactions: BEGIN is awaited before the statements (no pipelining behind it)', () => {
  it('statements run inside the transaction: its options, its snapshot, its rollback', async () => {
    const client = connectPostgres(t.env.DATABASE_URL, { max: 2, applicationName: 'pin-test-begin-tx' });
    try {
      await client`CREATE TABLE IF NOT EXISTS begin_patch_rows (id int PRIMARY KEY)`;
      const [{ level, inBlock }] = await client.begin('isolation level serializable', (tx) =>
        tx<{ level: string; inBlock: boolean }[]>`SELECT current_setting('transaction_isolation') AS level, now() = statement_timestamp() AS "inBlock"`);
      expect(level).toBe('serializable');
      expect(inBlock).toBe(false); // now() is the transaction's start, earlier than the statement's own
      // a failure after a write rolls the write back
      const failed = await client.begin(async (tx) => {
        await Promise.all([tx`INSERT INTO begin_patch_rows VALUES (1)`, tx`SELECT 1 / 0`]);
      }).then(() => null, (e: unknown) => e as { code?: string });
      expect(failed?.code).toBe('22012');
      expect(await client`SELECT id FROM begin_patch_rows`).toHaveLength(0);
    } finally {
      await client.end({ timeout: 1 });
    }
  });

  it("a failed BEGIN runs none of the transaction's statements", async () => {
    const client = connectPostgres(t.env.DATABASE_URL, { max: 1, applicationName: 'pin-test-begin-failed' });
    try {
      await client`CREATE TABLE IF NOT EXISTS begin_failed_rows (id int PRIMARY KEY)`;
      // an isolation level PostgreSQL does not know: BEGIN fails; a statement pipelined behind it would run
      // on its own, outside any transaction, and commit
      const failed = await client.begin('isolation level bogus', (tx) => tx`INSERT INTO begin_failed_rows VALUES (1)`)
        .then(() => null, (e: unknown) => e as { code?: string });
      expect(failed?.code).toBe('42601');
      expect(await client`SELECT id FROM begin_failed_rows`).toHaveLength(0);
      const [{ one }] = await client<{ one: number }[]>`SELECT 1 AS one`;
      expect(one).toBe(1);
    } finally {
      await client.end({ timeout: 1 });
    }
  });

  it('more transactions than connections: each waits for a connection and runs alone in its own transaction', async () => {
    const client = connectPostgres(t.env.DATABASE_URL, { max: 2, applicationName: 'pin-test-begin-queue' });
    try {
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => client.begin(async (tx) => {
        const [[{ xid }], [{ pid }]] = await Promise.all([tx<{ xid: string }[]>`SELECT txid_current()::text AS xid`, tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`]);
        await tx`SELECT pg_sleep(0.01)`;
        const [{ again }] = await tx<{ again: string }[]>`SELECT txid_current()::text AS again`;
        return { i, xid, again, pid };
      })));
      for (const r of results) expect(r.again).toBe(r.xid);
      expect(new Set(results.map((r) => r.xid)).size).toBe(12);
      expect(new Set(results.map((r) => r.pid)).size).toBeLessThanOrEqual(2);
    } finally {
      await client.end({ timeout: 1 });
    }
  });
});

/** postgres.js `onclose` as a promise: resolves when the next connection close is seen by the client. */
function closeWatch() {
  const waiting: (() => void)[] = [];
  return {
    onclose: () => {
      waiting.splice(0).forEach((w) => w());
    },
    /** call before causing the close: resolves at the first close seen after this call */
    next: (): Promise<void> => new Promise<void>((resolve) => { waiting.push(resolve); }),
  };
}

/** Exceptions and rejections that escape every caller (vitest would also report them and fail the run). */
function collectUncaught() {
  const errors: unknown[] = [];
  const onError = (e: unknown) => { errors.push(e); };
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  return {
    errors,
    stop: () => {
      process.off('uncaughtException', onError);
      process.off('unhandledRejection', onError);
    },
  };
}
