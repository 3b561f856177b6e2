import postgres from 'postgres';
import { dropDatabase, withDatabase } from '../../scripts/infra/index';
import { runMigrations } from '../../server/platform/migrate';

/** The bench's own databases on the bench PostgreSQL: created migrated, dropped at the end (unless --keep). */
export class BenchDatabases {
  private readonly created: string[] = [];
  constructor(private readonly adminUrl: string, private readonly suffix: string, private readonly log: (l: string) => void) {}

  /** A fresh, migrated database `pinbench_<name>_<suffix>`; returns its URL. */
  async create(name: string): Promise<string> {
    const db = `pinbench_${name}_${this.suffix}`;
    await dropDatabase(this.adminUrl, db);
    const admin = postgres(this.adminUrl, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`CREATE DATABASE "${db}"`);
    } finally {
      await admin.end({ timeout: 1 });
    }
    const url = withDatabase(this.adminUrl, db);
    await runMigrations(url);
    const sql = rawClient(url, 1);
    try {
      // bench.uuid(name): a deterministic, RFC-valid (version 5 / variant 8) uuid, as md5Uuid() in TypeScript
      await sql.unsafe(`CREATE SCHEMA IF NOT EXISTS bench`);
      await sql.unsafe(`CREATE FUNCTION bench.uuid(name text) RETURNS uuid IMMUTABLE STRICT LANGUAGE sql AS
        $$ SELECT (substr(h, 1, 12) || '5' || substr(h, 14, 3) || '8' || substr(h, 18, 15))::uuid FROM (SELECT md5(name) AS h) x $$`);
    } finally {
      await sql.end({ timeout: 1 });
    }
    this.created.push(db);
    this.log(`database ${db} created and migrated`);
    return url;
  }

  async dropAll(): Promise<void> {
    for (const db of this.created.splice(0)) await dropDatabase(this.adminUrl, db).catch(() => {});
  }
}

/** A plain postgres.js client for data preparation and raw baselines. */
export function rawClient(url: string, max = 4): postgres.Sql {
  return postgres(url, { max, onnotice: () => {}, connection: { application_name: 'pin-bench' } });
}

/**
 * After a restore: clean dead tuples and statistics, then flush dirty pages, so that every measured
 * run starts from the same physical state and no checkpoint from the restore lands inside it.
 */
export async function settle(sql: postgres.Sql, tables: string[]): Promise<void> {
  await sql.unsafe(`VACUUM (ANALYZE) ${tables.join(', ')}`);
  await sql.unsafe('CHECKPOINT').catch(() => { /* not a superuser on an external server: skip */ });
}

export const timed = async <T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> => {
  const t0 = performance.now();
  const result = await fn();
  return { ms: performance.now() - t0, result };
};
