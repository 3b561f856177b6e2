import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { publishPropertyObjectSnapshot } from '../server/chessboard/commands';
import { createDatabase } from '../server/platform/db';
import { EnvError, envSchema, parseEnvWith } from '../server/platform/env';

/**
 * `npm run chessboard:snapshot [-- --tenant <uuid>]`: republishes every property object's current state
 * (pin.chessboard.property-object-upserted.v1, each at its current version) through chessboard.outbox;
 * the worker's relay publishes it. Every projection of the objects (crm's, catalog's cards) takes what it
 * lacks and keeps what it has. The last stdout line is the summary as JSON. Exit 2 on a usage error.
 * To rebuild crm's projection and prove it, use `npm run crm:rebuild-projection`, which runs this first.
 */
async function main(): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  const tenantAt = args.indexOf('--tenant');
  const tenant = tenantAt >= 0 ? z.uuid().safeParse(args[tenantAt + 1]) : null;
  const unknown = args.filter((a, i) => !(i === tenantAt || i === tenantAt + 1));
  if (unknown.length > 0 || (tenant && !tenant.success)) {
    console.error(`${unknown.length > 0 ? `unknown argument "${unknown[0]}"` : '--tenant takes a tenant id (uuid)'}\nusage: npm run chessboard:snapshot -- [--tenant <uuid>]`);
    return 2;
  }
  let env;
  try {
    env = parseEnvWith(envSchema.pick({ DATABASE_URL: true }), process.env);
  } catch (e) {
    if (e instanceof EnvError) { console.error(e.message); return 1; }
    throw e;
  }
  const database = createDatabase(env.DATABASE_URL, { max: 1, applicationName: 'pin-chessboard-snapshot' });
  const signal = new AbortController();
  process.once('SIGINT', () => signal.abort());
  process.once('SIGTERM', () => signal.abort());
  try {
    const correlationId = randomUUID();
    const started = Date.now();
    const summary = await publishPropertyObjectSnapshot(database, { correlationId, tenantId: tenant?.data, signal: signal.signal });
    console.log(JSON.stringify({ correlationId, ...summary, durationMs: Date.now() - started }));
    return summary.complete ? 0 : 1;
  } finally {
    await database.close();
  }
}

main().then((code) => process.exit(code), (e) => {
  console.error(`chessboard:snapshot failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
