import net from 'node:net';
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

describe('postgres.js patch: pipelined BEGIN (porsager/postgres#951)', () => {
  /** The socket writes to PostgreSQL while `fn` runs (what a loopback round trip costs is mostly its send()). */
  async function writesDuring<T>(port: number, fn: () => Promise<T>): Promise<{ result: T; writes: number }> {
    const original = net.Socket.prototype.write;
    let writes = 0;
    net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]) {
      if (this.remotePort === port) writes++;
      return (original as (...a: unknown[]) => boolean).apply(this, args);
    } as typeof original;
    try {
      return { result: await fn(), writes };
    } finally {
      net.Socket.prototype.write = original;
    }
  }

  it('the first statements go out with BEGIN: one write for BEGIN + statements, one for COMMIT', async () => {
    const client = connectPostgres(t.env.DATABASE_URL, { max: 1, applicationName: 'pin-test-begin' });
    try {
      await client`SELECT 1`; // connected
      const port = Number(new URL(t.env.DATABASE_URL).port || 5432);
      const { result, writes } = await writesDuring(port, () => client.begin(async (tx) => {
        const [a, b] = await Promise.all([tx`SELECT 1 AS one`, tx`SELECT 2 AS two`]);
        return [a[0]!.one, b[0]!.two];
      }));
      expect(result).toEqual([1, 2]);
      expect(writes).toBe(2); // unpatched: 3 (BEGIN alone, then the statements, then COMMIT)
    } finally {
      await client.end({ timeout: 1 });
    }
  });

  it('statements sent behind BEGIN run inside the transaction: its options, its snapshot, its rollback', async () => {
    const client = connectPostgres(t.env.DATABASE_URL, { max: 2, applicationName: 'pin-test-begin-tx' });
    try {
      await client`CREATE TABLE IF NOT EXISTS begin_patch_rows (id int PRIMARY KEY)`;
      const [{ level, readOnly, inBlock }] = await client.begin('isolation level serializable read only', (tx) =>
        tx<{ level: string; readOnly: string; inBlock: boolean }[]>`SELECT current_setting('transaction_isolation') AS level, current_setting('transaction_read_only') AS "readOnly", now() = statement_timestamp() AS "inBlock"`);
      expect(level).toBe('serializable');
      expect(readOnly).toBe('on');
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

  it("a failed BEGIN runs none of the transaction's statements, though they were sent behind it", async () => {
    const client = connectPostgres(t.env.DATABASE_URL, { max: 1, applicationName: 'pin-test-begin-failed' });
    try {
      await client`CREATE TABLE IF NOT EXISTS begin_failed_rows (id int PRIMARY KEY)`;
      const port = Number(new URL(t.env.DATABASE_URL).port || 5432);
      // an isolation level PostgreSQL does not know: the transaction's start fails; the INSERT is pipelined
      // behind it (one write with BEGIN) and must not run on its own, outside any transaction, and commit
      const { result: failed, writes } = await writesDuring(port, () =>
        client.begin('isolation level bogus', (tx) => tx`INSERT INTO begin_failed_rows VALUES (1)`)
          .then(() => null, (e: unknown) => e as { code?: string }));
      expect(failed?.code).toBe('42601'); // the refused option's own error, not "transaction aborted"
      expect(writes).toBe(2); // BEGIN, SET TRANSACTION and the INSERT in one write; the ROLLBACK
      expect(await client`SELECT id FROM begin_failed_rows`).toHaveLength(0);
      const [{ one }] = await client<{ one: number }[]>`SELECT 1 AS one`;
      expect(one).toBe(1);
    } finally {
      await client.end({ timeout: 1 });
    }
  });

  it("a query of the pool issued while BEGIN is on its way does not run inside that transaction", async () => {
    const client = connectPostgres(t.env.DATABASE_URL, { max: 1, applicationName: 'pin-test-begin-outside' });
    try {
      await client`SELECT 1`;
      const inside = client.begin(async (tx) => {
        const [{ xid }] = await tx<{ xid: string }[]>`SELECT txid_current()::text AS xid, pg_sleep(0.2)`;
        return xid;
      });
      await new Promise((r) => setImmediate(r)); // BEGIN written
      const [{ outside }] = await client<{ outside: string }[]>`SELECT txid_current()::text AS outside`;
      expect(outside).not.toBe(await inside); // a transaction of its own, after the other one ended
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
