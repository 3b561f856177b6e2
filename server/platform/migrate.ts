import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { createDatabase } from './db';

const here = path.dirname(fileURLToPath(import.meta.url));
export const MIGRATIONS_FOLDER = path.resolve(here, '../../drizzle/migrations');

/** Applies drizzle/migrations to the database; safe to call repeatedly and from parallel processes. */
export async function runMigrations(url: string): Promise<void> {
  const database = createDatabase(url, { max: 1, applicationName: 'pin-migrate' });
  try {
    // serialise concurrent migrators (web + worker starting together)
    await database.sql`SELECT pg_advisory_lock(hashtext('pin:migrations'))`;
    await migrate(database.db, { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await database.sql`SELECT pg_advisory_unlock(hashtext('pin:migrations'))`.catch(() => {});
    await database.close();
  }
}
