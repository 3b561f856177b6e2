import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../testing/harness';
import { executePrepared } from './db';

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
