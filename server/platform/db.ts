import { getTableColumns, sql, type SQL, type Table } from 'drizzle-orm';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
// no relational schema: the code queries with the SQL builder over the contexts' own table objects
// (never `db.query.<table>`), so platform needs no list of every context's tables
export type Db = PostgresJsDatabase;
/** A transaction handle; commands and queries are functions of (tx, input). */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Either a db or a tx: read-only queries accept both. */
export type DbOrTx = Db | Tx;

/** A list of ids as ONE uuid[] parameter (`= ANY(…)`), not one parameter per id. The ids are uuids already validated. */
export const uuidArray = (ids: readonly string[]): SQL => sql`${`{${ids.join(',')}}`}::uuid[]`;

/**
 * Prepared statements on the hot paths (the session lookup, a command's reads and writes).
 *
 * drizzle runs a query as an unnamed statement (postgres.js `prepare: false`), and postgres.js sends an
 * unnamed statement that has parameters in two round trips: Parse + Describe, wait for the parameter
 * types, then Bind + Execute. Worse, in a transaction that wait puts the connection in postgres.js's
 * "full" queue, so statements issued together are no longer pipelined: each waits for the one before
 * it. A named statement (drizzle's `.prepare(name)` → postgres.js `prepare: true`) is described once per
 * connection and then sent as Bind + Execute in one round trip, pipelined with its neighbours (docs/decisions/0016).
 *
 * Only fixed-shape statements are run this way (postgres.js keeps one prepared statement per distinct
 * SQL text on each connection, without a bound): never a statement whose text grows with its input
 * (`inArray` over a list, a multi-row VALUES).
 */

/**
 * A fixed-shape drizzle query built ONCE per process, its values left as `sql.placeholder(name)`s, and
 * run as the named prepared statement `name` on the db or transaction of each call. Building a query
 * (drizzle's SQL chunks, column lists, the row mapping) costs tens of microseconds a statement, the
 * largest share of drizzle's CPU per command when it was done per transaction (docs/decisions/0016).
 * drizzle binds a prepared query to the session it was built on; `.on(db)` runs the built one on the
 * caller's connection instead (patches/drizzle-orm+0.45.4.patch, drizzle-team/drizzle-orm#2826). For
 * reads whose shape never changes (a lookup by key, a row lock).
 */
export function preparedQuery<P extends { execute(values?: Record<string, unknown>): Promise<unknown>; on(db: DbOrTx): P }>(
  name: string,
  build: (db: DbOrTx) => { prepare(name: string): P },
): (db: DbOrTx, values: Record<string, unknown>) => ReturnType<P['execute']> {
  let built: P | undefined;
  return (db, values) => {
    built ??= build(db).prepare(name);
    return built.on(db).execute(values) as ReturnType<P['execute']>;
  };
}

/**
 * A fixed-shape write (INSERT or UPDATE) run prepared like preparedQuery: `build` gets one
 * placeholder per column in `keys` (named by the column's key) for the row's values, and may add
 * placeholders of its own (a WHERE's) that each call passes in `params`. Each call encodes the row's
 * values as drizzle does for a plain value (null stays null, anything else through the column's
 * mapToDriverValue: a Date → ISO text, jsonb → JSON text) and runs the statement prepared on its own
 * caller's connection.
 *
 * Every key of `keys` must have a value: an `undefined` throws instead of meaning DEFAULT (a built
 * statement has one shape; a column left to its default is one not in `keys`).
 *
 * (The placeholders are `sql\`${sql.placeholder(k)}\``, not bare `sql.placeholder(k)`: drizzle binds a
 * bare one to its column and runs the column's encoder on the value even when it is null — a nullable
 * timestamp then fails with `null.toISOString()`.)
 */
export function preparedWrite<
  T extends Table,
  K extends keyof T['$inferInsert'] & string,
  P extends { execute(values?: Record<string, unknown>): Promise<unknown>; on(db: DbOrTx): P },
>(
  name: string,
  table: T,
  keys: readonly K[],
  build: (db: DbOrTx, values: Record<K, SQL>) => { prepare(name: string): P },
): (db: DbOrTx, row: { [C in K]: Exclude<T['$inferInsert'][C], undefined> }, params?: Record<string, unknown>) => ReturnType<P['execute']> {
  const columns = getTableColumns(table);
  const encoders = keys.map((k) => [k, columns[k]!] as const);
  const values = Object.fromEntries(keys.map((k) => [k, sql`${sql.placeholder(k)}`])) as Record<K, SQL>;
  const run = preparedQuery(name, (db) => build(db, values));
  return (db, row, params) => {
    const encoded: Record<string, unknown> = { ...params };
    for (const [k, column] of encoders) {
      const v: unknown = row[k];
      if (v === undefined) throw new Error(`${name}: no value for ${k}`);
      encoded[k] = v === null ? null : column.mapToDriverValue(v);
    }
    return run(db, encoded);
  };
}

export interface Database {
  sql: postgres.Sql;
  db: Db;
  close(): Promise<void>;
}

export function createDatabase(url: string, opts: { max?: number; applicationName?: string } = {}): Database {
  // timestamps come back as Date; numeric as string unless drizzle maps it
  const sql = connectPostgres(url, { max: opts.max ?? 10, applicationName: opts.applicationName ?? 'pin-booking' });
  const db = drizzle(sql);
  return { sql, db, close: () => sql.end({ timeout: 5 }) };
}

/**
 * A postgres.js client with the project's options; every client of the system is made here.
 *
 * Why the startup packet is padded past 1 KB: postgres.js 3.4.x leaves a connection half-broken when
 * it closes while a small write is pending (a transaction's ROLLBACK after CONNECTION_CLOSED, or a
 * statement queued just before a PostgreSQL restart — porsager/postgres#1154 and porsager/postgres#1208): the stale bytes
 * stay buffered and the flush timer stays set, so on every reconnect its StartupMessage is buffered
 * behind them and never sent — each query routed to that connection waits for connect_timeout (30 s)
 * and fails, for minutes. A write of 1 KB or more is flushed at once, so with a StartupMessage that
 * large the stale bytes go out with it, the server drops that one attempt, and postgres.js reconnects
 * cleanly and runs the query (its pending query is kept across that reconnect). The padding is a
 * custom setting (`pin.startup_padding`) that nothing reads.
 */
export function connectPostgres(url: string, opts: { max: number; applicationName: string; onclose?: (connectionId: number) => void }): postgres.Sql {
  return postgres(url, {
    max: opts.max,
    onnotice: () => {},
    backoff: reconnectBackoffSeconds,
    ...(opts.onclose ? { onclose: opts.onclose } : {}),
    connection: { application_name: opts.applicationName, 'pin.startup_padding': STARTUP_PADDING },
  });
}
const STARTUP_PADDING = 'x'.repeat(1024);

/**
 * Seconds a connection waits before it reconnects after an error, given the pool's count of failed
 * connections. postgres.js's default grows as 3^n / 100 s up to 20 s, and n is shared by the whole pool:
 * an outage of a few seconds fails every connection several times, so once PostgreSQL is back the pool
 * still waits 5–20 s before it tries again and every request meanwhile hangs. Capped at half a second
 * (with jitter, so a pool does not reconnect in lockstep): the web answers within a second or two of the
 * database accepting connections, at the price of a few connection attempts a second while it is down.
 */
export function reconnectBackoffSeconds(failures: number): number {
  return Math.min(0.05 * 2 ** failures, MAX_RECONNECT_BACKOFF_S) * (0.5 + Math.random() / 2);
}
export const MAX_RECONNECT_BACKOFF_S = 0.5;

/**
 * postgres.js 3.4.x (porsager/postgres#1154 and porsager/postgres#1208): when a connection closes while a transaction is
 * open, postgres.js itself writes the ROLLBACK (or the next statement of the transaction) to the closed
 * connection from a setImmediate callback, which throws this TypeError outside any promise. The
 * transaction's caller has already been rejected (CONNECTION_CLOSED) and the pool reconnects on the next
 * query, so a process may log it and go on (`next start` logs every uncaught exception and goes on).
 */
/**
 * A connection reset raised with no listener: the socket's owner has already dropped it (removed its
 * listeners) when the peer reset it. Seen once in a fresh-clone CI run under load: the worker ended with
 * `read ECONNRESET` at TCP.onStreamRead during the PostgreSQL-restart scenario, while every query and
 * consumer had already failed with CONNECTION_CLOSED and was retrying. Nothing reads that socket any more,
 * so the process may log it and go on like the write above. (Which library drops the listener is not
 * known yet: postgres.js's `closed()` calls `removeAllListeners()`.)
 */
export function isAbandonedSocketReset(e: unknown): boolean {
  const err = e as NodeJS.ErrnoException | null;
  return err instanceof Error && err.code === 'ECONNRESET' && err.syscall === 'read';
}

export function isPostgresClosedConnectionWrite(e: unknown): boolean {
  return e instanceof TypeError
    && /Cannot read properties of null \(reading 'write'\)/.test(e.message)
    && /postgres[\\/](src|cjs[\\/]src)[\\/]connection\.js/.test(e.stack ?? '');
}
