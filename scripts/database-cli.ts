import { createDatabase, type Database } from '../server/platform/db';
import { EnvError, platformEnvSchema, parseEnvWith } from '../server/platform/env';

/**
 * The frame of a one-shot command on the database (`npm run chessboard:snapshot`, `crm:rebuild-projection`):
 * DATABASE_URL validated (one line and exit 1 when it is missing or wrong), a pool of `max` connections
 * named `applicationName`, SIGINT/SIGTERM turned into an abort signal the work can stop at, the pool closed
 * whatever happens, and the process exit code the work answers (1 with one line when it throws).
 */
export function runDatabaseCli(
  command: string,
  opts: { applicationName: string; max: number },
  work: (database: Database, signal: AbortSignal) => Promise<number>,
): void {
  const main = async (): Promise<number> => {
    let env;
    try {
      env = parseEnvWith(platformEnvSchema.pick({ DATABASE_URL: true }), process.env);
    } catch (e) {
      if (e instanceof EnvError) { console.error(e.message); return 1; }
      throw e;
    }
    const database = createDatabase(env.DATABASE_URL, opts);
    const abort = new AbortController();
    process.once('SIGINT', () => abort.abort());
    process.once('SIGTERM', () => abort.abort());
    try {
      return await work(database, abort.signal);
    } finally {
      await database.close();
    }
  };
  main().then((code) => process.exit(code), (e) => {
    console.error(`${command} failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
