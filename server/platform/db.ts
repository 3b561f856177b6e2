import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema';

export type Schema = typeof schema;
export type Db = PostgresJsDatabase<Schema>;
/** A transaction handle; commands and queries are functions of (tx, input). */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Either a db or a tx: read-only queries accept both. */
export type DbOrTx = Db | Tx;

export interface Database {
  sql: postgres.Sql;
  db: Db;
  close(): Promise<void>;
}

export function createDatabase(url: string, opts: { max?: number; applicationName?: string } = {}): Database {
  const sql = postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    connection: { application_name: opts.applicationName ?? 'pin-booking' },
    // timestamps come back as Date; numeric as string unless drizzle maps it
  });
  const db = drizzle(sql, { schema });
  return { sql, db, close: () => sql.end({ timeout: 5 }) };
}
