/**
 * `npm run db:seed`: the demo seed (seed.ts); `-- --scale target` adds the specs' target load
 * (seed-target.ts, which builds on the demo seed). The command line lives apart from both so that
 * seed-target.ts can import seed.ts without seed.ts importing it back.
 */
import { seed } from './seed';
import { seedTarget, TARGET_SCALE } from './seed-target';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('invalid configuration: DATABASE_URL is required (a postgres:// URL)');
  process.exit(1);
}
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
};
const scale = arg('scale');
if (scale !== undefined && scale !== 'target') {
  console.error(`invalid argument --scale ${scale}: the only scale is "target"`);
  process.exit(1);
}
const count = (name: string, fallback: number) => {
  const v = arg(name);
  if (v === undefined) return fallback;
  const n = Number(v.replace(/[_,]/g, ''));
  if (!Number.isInteger(n) || n < 0) {
    console.error(`invalid argument --${name} ${v}: a whole number`);
    process.exit(1);
  }
  return n;
};
const run = scale === 'target'
  ? seedTarget(url, {
    objects: count('objects', TARGET_SCALE.objects),
    activeBookings: count('bookings', TARGET_SCALE.activeBookings),
    endedBookings: count('ended-bookings', count('bookings', TARGET_SCALE.endedBookings)),
  })
  : seed(url);
run.then(() => process.exit(0), (e) => {
  console.error(`[seed] failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
