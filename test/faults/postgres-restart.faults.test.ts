import { it } from 'vitest';
import { postgresRestartScenario } from './scenarios/postgres-restart';

/** Full profile: PostgreSQL (this file's own) restarted 3 times, 5 s down each, during relay, jobs, consumers and web commands. */
it('PostgreSQL restarted 3× during relay, jobs and consumers: web, worker and consumers recover by themselves and finish the work', async () => {
  await postgresRestartScenario({ restarts: 3, downMs: 5000, objects: 1500, holds: 1200, label: 'postgres restart' });
});
