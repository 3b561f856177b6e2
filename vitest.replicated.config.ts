import { defineConfig } from 'vitest/config';
import faults from './vitest.faults.config';

/**
 * `npm run test:faults -- --pg-replicas 1`: the PostgreSQL failover scenarios (test/faults/**\/*.replicated.test.ts),
 * each on a primary + synchronous replica it starts for itself (scripts/infra/postgres-replicated.ts); the
 * global setup's Kafka carries their topics. A profile of its own, like the multi-broker one: two more
 * PostgreSQL servers and 4 Node processes under load do not fit next to the rest of the suite on 2 cores.
 */
export default defineConfig({
  ...faults,
  // not mergeConfig: it would append this include to the fault profile's instead of replacing it
  test: { ...faults.test, include: ['test/faults/**/*.replicated.test.ts'] },
});
