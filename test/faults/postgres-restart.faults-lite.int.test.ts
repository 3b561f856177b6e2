import { it } from 'vitest';
import { postgresRestartScenario } from './scenarios/postgres-restart';

/**
 * Reduced profile (npm test), and the regression test of the worker crash on a PostgreSQL restart
 * (postgres.js reserved connection used after its backend was terminated): one restart, 3 s down,
 * a stream of bookings through the web, 300 stuck holds. Full profile: postgres-restart.faults.test.ts.
 */
it('PostgreSQL restarted during relay, jobs and consumers: web, worker and consumers recover by themselves and finish the work', async () => {
  await postgresRestartScenario({ restarts: 1, downMs: 3000, objects: 400, holds: 300, label: 'postgres restart (lite)' });
}, 240_000);
