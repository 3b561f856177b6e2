import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../testing/harness';
import { executePrepared, preparedQuery } from './db';

/**
 * executePrepared (platform/db.ts): a statement run as a named, server-side prepared statement on the
 * connection of the db or transaction it is given — prepared once per connection and reused, where
 * drizzle's own execute() sends an unnamed statement every time (two round trips, no pipelining).
 */
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

/** The protocol-level prepared statements of the connection that runs `tx` whose text contains `marker`. */
const preparedOn = async (tx: Parameters<Parameters<TestContext['database']['db']['transaction']>[0]>[0], marker: string) =>
  (await tx.execute(sql`SELECT statement FROM pg_prepared_statements WHERE NOT from_sql AND strpos(statement, ${marker}) > 0`)) as unknown as { statement: string }[];

describe('executePrepared', () => {
  it('runs in the caller\'s transaction, prepared once on its connection and reused with other values', async () => {
    const marker = `pin_prepared_${randomUUID().replaceAll('-', '')}`;
    await t.database.db.transaction(async (tx) => {
      // the transaction's own uncommitted state is visible: the statement runs on its connection
      await tx.execute(sql`SELECT set_config('pin.test_value', ${marker}, true)`);
      const text = (v: number) => sql`SELECT current_setting('pin.test_value') AS value, ${v}::int AS v, ${sql.raw(`'${marker}'`)} AS marker`;
      const [first] = await executePrepared<{ value: string; v: number }>(tx, 'test_prepared', text(1));
      const [second] = await executePrepared<{ value: string; v: number }>(tx, 'test_prepared', text(2));
      expect(first).toMatchObject({ value: marker, v: 1 });
      expect(second).toMatchObject({ value: marker, v: 2 });
      // one prepared statement for both calls (drizzle's execute() would leave none)
      expect(await preparedOn(tx, marker)).toHaveLength(1);
    });
  });

  it('drizzle\'s plain execute() of the same text prepares nothing (what executePrepared is for)', async () => {
    const marker = `pin_unprepared_${randomUUID().replaceAll('-', '')}`;
    await t.database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT ${1}::int AS v, ${sql.raw(`'${marker}'`)} AS marker`);
      expect(await preparedOn(tx, marker)).toHaveLength(0);
    });
  });
});

describe('preparedQuery', () => {
  it('builds once, runs on the connection of each caller (its transaction\'s own rows), with each call\'s values', async () => {
    let builds = 0;
    const byMarker = preparedQuery('test_prepared_query', (db) => {
      builds++;
      return db.select({ v: sql<string>`current_setting('pin.test_value', true)`.as('v'), n: sql<number>`${sql.placeholder('n')}::int`.as('n') }).from(sql`(SELECT 1) AS one`);
    });
    const run = (n: number) => t.database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT set_config('pin.test_value', ${`tx-${n}`}, true)`);
      return byMarker(tx, { n });
    });
    expect(await run(1)).toEqual([{ v: 'tx-1', n: 1 }]);
    expect(await run(2)).toEqual([{ v: 'tx-2', n: 2 }]);
    // on the pool, outside any transaction: the transactions' local setting is not there ('' once a session has seen it)
    const [pooled] = await byMarker(t.database.db, { n: 3 });
    expect(pooled?.n).toBe(3);
    expect([null, '']).toContain(pooled?.v);
    expect(builds).toBe(1);
  });
});
