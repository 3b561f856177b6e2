import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { preparedQuery, preparedWrite } from './db';

/**
 * The hot statements (platform/db.ts, docs/decisions/0016) run as named, server-side prepared statements
 * through drizzle's `.prepare(name)`, built once and run on the connection of the db or transaction they are given:
 * prepared once per connection and reused, where drizzle's own execute() sends an unnamed statement every
 * time (two round trips, no pipelining).
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

describe('a query builder run with .prepare(name)', () => {
  it('runs in the caller\'s transaction, prepared once on its connection and reused with other values', async () => {
    const marker = `pin_prepared_${randomUUID().replaceAll('-', '')}`;
    await t.database.db.transaction(async (tx) => {
      // the transaction's own uncommitted state is visible: the statement runs on its connection
      await tx.execute(sql`SELECT set_config('pin.test_value', ${marker}, true)`);
      const run = (v: number) => tx
        .select({ value: sql<string>`current_setting('pin.test_value')`, v: sql<number>`${v}::int`, marker: sql.raw(`'${marker}'`) })
        .from(sql`(SELECT 1) AS one`).prepare('test_prepared').execute();
      const [first] = await run(1);
      const [second] = await run(2);
      expect(first).toMatchObject({ value: marker, v: 1 });
      expect(second).toMatchObject({ value: marker, v: 2 });
      // one prepared statement for both calls (drizzle's execute() would leave none)
      expect(await preparedOn(tx, marker)).toHaveLength(1);
    });
  });

  it('drizzle\'s plain execute() of the same text prepares nothing (what .prepare is for)', async () => {
    const marker = `pin_unprepared_${randomUUID().replaceAll('-', '')}`;
    await t.database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT ${1}::int AS v, ${sql.raw(`'${marker}'`)} AS marker`);
      expect(await preparedOn(tx, marker)).toHaveLength(0);
    });
  });
});

/**
 * patches/drizzle-orm+0.45.4.patch (drizzle-team/drizzle-orm#2826, #613): drizzle binds a prepared query
 * to the session it was built on; the patch's `.on(db)` runs the built query on another db's or
 * transaction's connection, so a statement is built once per process and not once per transaction.
 */
describe('drizzle patch: a prepared query built once, run in any transaction with .on(tx)', () => {
  const rows = pgTable('prepared_on_rows', { id: uuid('id').primaryKey(), name: text('name').notNull(), at: timestamp('at', { withTimezone: true, precision: 3 }).notNull() });
  beforeAll(async () => {
    await t.database.db.execute(sql`CREATE TABLE prepared_on_rows (id uuid PRIMARY KEY, name text NOT NULL, at timestamptz(3) NOT NULL)`);
  });

  it('unpatched behaviour it fixes: a query prepared on the pool runs outside the caller\'s transaction', async () => {
    const id = randomUUID();
    const onPool = t.database.db.select().from(rows).where(eq(rows.id, sql.placeholder('id'))).prepare('test_on_pool');
    await t.database.db.transaction(async (tx) => {
      await tx.insert(rows).values({ id, name: 'uncommitted', at: new Date() });
      expect(await onPool.execute({ id })).toEqual([]);
      tx.rollback();
    }).catch(() => {});
  });

  it('.on(tx) runs it in the transaction: its uncommitted rows, mapped as drizzle maps them, and its locks', async () => {
    const id = randomUUID();
    const at = new Date('2026-12-04T10:11:12.345Z');
    const built = t.database.db.select().from(rows).where(eq(rows.id, sql.placeholder('id'))).for('update').prepare('test_on_tx');
    await t.database.db.transaction(async (tx) => {
      await tx.insert(rows).values({ id, name: 'in tx', at });
      const viaOn = await built.on(tx).execute({ id });
      // drizzle's own answer for the same statement prepared on this transaction
      const own = await tx.select().from(rows).where(eq(rows.id, sql.placeholder('id'))).for('update').prepare('test_on_tx_own').execute({ id });
      expect(viaOn).toEqual([{ id, name: 'in tx', at }]);
      expect(viaOn).toEqual(own);
    });
    // the row lock is the transaction's: another transaction waits for it (NOWAIT fails at once)
    await t.database.db.transaction(async (tx) => {
      await built.on(tx).execute({ id });
      const other = await t.database.sql.begin((o) => o`SELECT 1 FROM prepared_on_rows WHERE id = ${id} FOR UPDATE NOWAIT`).then(() => null, (e: { code?: string }) => e.code);
      expect(other).toBe('55P03');
    });
    // and the built query itself stays on the pool's connection
    expect(await built.execute({ id })).toEqual([{ id, name: 'in tx', at }]);
  });
});

describe('preparedQuery', () => {
  it('runs on the connection of each caller (its transaction\'s own rows), with each call\'s values; built once per process', async () => {
    let builds = 0;
    const byMarker = preparedQuery('test_prepared_query', (db) => {
      builds++;
      return db.select({ v: sql<string>`current_setting('pin.test_value', true)`.as('v'), n: sql<number>`${sql.placeholder('n')}::int`.as('n') }).from(sql`(SELECT 1) AS one`);
    });
    const run = (n: number) => t.database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT set_config('pin.test_value', ${`tx-${n}`}, true)`);
      const [first] = await byMarker(tx, { n });
      // a second call in the same transaction reuses what the first built
      expect(await byMarker(tx, { n: n + 100 })).toEqual([{ v: `tx-${n}`, n: n + 100 }]);
      return [first];
    });
    expect(await run(1)).toEqual([{ v: 'tx-1', n: 1 }]);
    expect(await run(2)).toEqual([{ v: 'tx-2', n: 2 }]);
    expect(builds).toBe(1);
    // on the pool, outside any transaction: the transactions' local setting is not there ('' once a session has seen it)
    const [pooled] = await byMarker(t.database.db, { n: 3 });
    expect(pooled?.n).toBe(3);
    expect([null, '']).toContain(pooled?.v);
    await byMarker(t.database.db, { n: 4 });
    expect(builds).toBe(1);
  });
});

describe('preparedWrite', () => {
  const things = pgTable('prepared_write_things', {
    id: uuid('id').primaryKey(),
    name: text('name'),
    at: timestamp('at', { withTimezone: true, precision: 3 }),
    doc: jsonb('doc').$type<{ a: number[] }>(),
    version: integer('version').notNull().default(1),
  });
  beforeAll(async () => {
    await t.database.db.execute(sql`CREATE TABLE prepared_write_things (id uuid PRIMARY KEY, name text, at timestamptz(3), doc jsonb, version int NOT NULL DEFAULT 1)`);
  });

  it('writes the same row as drizzle\'s insert of the values (a Date, a null timestamp, jsonb), built once, prepared on the caller\'s transaction', async () => {
    let builds = 0;
    const insert = preparedWrite('test_prepared_write', things, ['id', 'name', 'at', 'doc'], (db, values) => {
      builds++;
      return db.insert(things).values(values);
    });
    const at = new Date('2026-12-02T10:11:12.345Z');
    const rows = [
      { id: randomUUID(), name: 'a', at, doc: { a: [1, 2] } },
      // null where drizzle's column-bound placeholder would run the timestamp's encoder on it (null.toISOString())
      { id: randomUUID(), name: null, at: null, doc: null },
    ];
    await t.database.db.transaction(async (tx) => {
      for (const row of rows) await insert(tx, row);
      // on the transaction's connection, as a prepared statement
      const prepared = (await tx.execute(sql`SELECT statement FROM pg_prepared_statements WHERE NOT from_sql AND statement LIKE '%prepared_write_things%'`)) as unknown[];
      expect(prepared).toHaveLength(1);
    });
    // the same values through drizzle's plain insert, for comparison
    const plain = rows.map((r) => ({ ...r, id: randomUUID() }));
    for (const row of plain) await t.database.db.insert(things).values(row);
    const read = async (id: string) => (await t.database.db.select().from(things).where(eq(things.id, id)))[0];
    for (const [i, row] of rows.entries()) {
      expect(await read(row.id)).toEqual({ ...row, version: 1 });
      expect({ ...(await read(plain[i]!.id)), id: row.id }).toEqual(await read(row.id));
    }
    // built once for both rows (and for any later transaction)
    expect(builds).toBe(1);
  });

  it('an UPDATE with placeholders of its own (the WHERE\'s), given per call', async () => {
    const id = randomUUID();
    await t.database.db.insert(things).values({ id, name: 'before', at: null, doc: null });
    const update = preparedWrite('test_prepared_update', things, ['name', 'at'], (db, values) => db.update(things)
      .set({ ...values, version: sql`${things.version} + 1` })
      .where(eq(things.id, sql.placeholder('whereId')))
      .returning({ version: things.version }));
    const at = new Date('2026-12-02T00:00:00.000Z');
    expect(await update(t.database.db, { name: 'after', at }, { whereId: id })).toEqual([{ version: 2 }]);
    expect(await update(t.database.db, { name: 'other', at: null }, { whereId: randomUUID() })).toEqual([]);
    expect((await t.database.db.select().from(things).where(eq(things.id, id)))[0]).toEqual({ id, name: 'after', at, doc: null, version: 2 });
  });

  it('a key without a value throws (it does not silently become the column\'s DEFAULT)', async () => {
    const insert = preparedWrite('test_prepared_write_missing', things, ['id', 'name', 'version'], (db, values) => db.insert(things).values(values));
    expect(() => insert(t.database.db, { id: randomUUID(), name: 'x', version: undefined as unknown as number })).toThrow(/no value for version/);
  });
});
