import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { publishPropertyObjectSnapshot } from '../server/chessboard/commands';
import { runDatabaseCli } from './database-cli';

/**
 * `npm run chessboard:snapshot [-- --tenant <uuid>]`: republishes every property object's current state
 * (pin.chessboard.property-object-upserted.v1, each at its current version) through chessboard.outbox;
 * the worker's relay publishes it. Every projection of the objects (crm's, catalog's cards) takes what it
 * lacks and keeps what it has. The last stdout line is the summary as JSON. Exit 2 on a usage error.
 * To rebuild crm's projection and prove it, use `npm run crm:rebuild-projection`, which runs this first.
 */
function parseArgs(): string | { tenantId?: string } {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  const tenantAt = args.indexOf('--tenant');
  const tenant = tenantAt >= 0 ? z.uuid().safeParse(args[tenantAt + 1]) : null;
  const unknown = args.filter((_, i) => tenantAt < 0 || (i !== tenantAt && i !== tenantAt + 1));
  if (unknown.length > 0) return `unknown argument "${unknown[0]}"`;
  if (tenant && !tenant.success) return '--tenant takes a tenant id (uuid)';
  return { tenantId: tenant?.data };
}

const args = parseArgs();
if (typeof args === 'string') {
  console.error(`${args}\nusage: npm run chessboard:snapshot -- [--tenant <uuid>]`);
  process.exit(2);
}
runDatabaseCli('chessboard:snapshot', { max: 1, applicationName: 'pin-chessboard-snapshot' }, async (database, signal) => {
  const correlationId = randomUUID();
  const started = Date.now();
  const summary = await publishPropertyObjectSnapshot(database, { correlationId, tenantId: args.tenantId, signal });
  console.log(JSON.stringify({ correlationId, ...summary, durationMs: Date.now() - started }));
  return summary.complete ? 0 : 1;
});
