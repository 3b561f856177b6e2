import { z } from 'zod';
import { runDatabaseCli } from './database-cli';
import { compareCrmProjection, rebuildCrmProjection, type ProjectionComparison } from '../server/ops/crm-projection-rebuild';

/**
 * `npm run crm:rebuild-projection [-- --reset] [--timeout <seconds>]`: rebuilds crm's projection of
 * property objects (crm.property_objects) from the chessboard and proves it equal to it.
 *   1. with --reset, empties the projection (what the chessboard no longer has goes only this way;
 *      until an object's snapshot event is consumed, booking it answers NOT_FOUND);
 *   2. the chessboard republishes every object's current state through its outbox (its snapshot);
 *   3. waits until crm's projection consumer has consumed every snapshot event (the worker must run:
 *      its relay publishes them and its consumer applies them), at most --timeout seconds (default 600);
 *   4. compares the projection with the chessboard row by row and prints the counts and the first differences.
 * `--check` does step 4 alone. The last stdout line is the report as JSON. Exit 0 when the projection
 * equals the chessboard, 1 when it differs (or the snapshot was not consumed in time), 2 on a usage error.
 */

const USAGE = 'usage: npm run crm:rebuild-projection -- [--reset] [--timeout <seconds>] | --check';

const argsSchema = z.object({ reset: z.boolean(), check: z.boolean(), timeoutSeconds: z.number().int().positive().max(86_400) });

function parseArgs(argv: string[]): z.infer<typeof argsSchema> | string {
  const args = argv.filter((a) => a !== '--');
  let reset = false;
  let check = false;
  let timeoutSeconds = 600;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--reset') reset = true;
    else if (a === '--check') check = true;
    else if (a === '--timeout') timeoutSeconds = Number(args[++i]);
    else return `unknown argument "${a}"`;
  }
  if (check && reset) return '--check compares only; it cannot be combined with --reset';
  const parsed = argsSchema.safeParse({ reset, check, timeoutSeconds });
  return parsed.success ? parsed.data : '--timeout takes a whole number of seconds (1 to 86400)';
}

function printComparison(c: ProjectionComparison): void {
  console.log(`chessboard objects ${c.chessboardObjects}, crm objects ${c.crmObjects}`);
  console.log(`missing in crm ${c.missingInCrm}, extra in crm ${c.extraInCrm}, status differs ${c.statusDiffers}, tenant/project differs ${c.ownerDiffers}, price differs ${c.priceDiffers}`);
  for (const d of c.sample) {
    const side = (s: typeof d.chessboard) => (s ? `${s.status} v${s.version} price ${s.price ?? '-'} tenant ${s.tenantId} project ${s.projectId}` : 'none');
    console.log(`  ${d.kind.padEnd(14)} ${d.propertyObjectId}: chessboard ${side(d.chessboard)} | crm ${side(d.crm)}`);
  }
  if (c.differences > c.sample.length) console.log(`  … and ${c.differences - c.sample.length} more`);
}

const args = parseArgs(process.argv.slice(2));
if (typeof args === 'string') {
  console.error(`${args}\n${USAGE}`);
  process.exit(2);
}
runDatabaseCli('crm:rebuild-projection', { max: 2, applicationName: 'pin-crm-rebuild-projection' }, async (database, signal) => {
  if (args.check) {
    const comparison = await compareCrmProjection(database.db);
    printComparison(comparison);
    const equal = comparison.differences === 0;
    console.log(equal ? 'EQUAL: crm.property_objects matches the chessboard' : `DIFFERENT: ${comparison.differences} objects differ`);
    console.log(JSON.stringify({ equal, ...comparison }));
    return equal ? 0 : 1;
  }
  const report = await rebuildCrmProjection(database, {
    reset: args.reset, timeoutMs: args.timeoutSeconds * 1000, signal, onProgress: (line) => console.log(line),
  });
  printComparison(report.comparison);
  console.log(report.equal ? 'EQUAL: crm.property_objects matches the chessboard'
    : `DIFFERENT: ${report.comparison.differences} objects differ, ${report.notProcessed} snapshot events not consumed${args.reset ? '' : ' (rows the chessboard no longer has need --reset)'}`);
  console.log(JSON.stringify(report));
  return report.equal ? 0 : 1;
});
