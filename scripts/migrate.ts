import { runMigrations } from '../server/platform/migrate';
import { redact } from './infra';

/** `npm run db:migrate`: applies drizzle/migrations to DATABASE_URL. */
const url = process.env.DATABASE_URL;
if (!url) {
  console.error('invalid configuration: DATABASE_URL is required (a postgres:// URL); `npm run infra` prints one');
  process.exit(1);
}
console.log(`[migrate] applying migrations to ${redact(url)}`);
runMigrations(url).then(
  () => console.log('[migrate] done'),
  (e) => {
    console.error(`[migrate] failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
