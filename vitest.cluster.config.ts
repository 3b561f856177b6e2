import { defineConfig } from 'vitest/config';
import faults from './vitest.faults.config';

/**
 * `npm run test:faults -- --brokers 3`: the multi-broker fault scenarios (test/faults/**\/*.cluster.test.ts)
 * on a local 3-node Kafka cluster each file starts for itself (scripts/infra/kafka-cluster.ts); the global
 * setup's PostgreSQL holds the scenarios' databases. A separate profile: 3 JVMs + 4 Node processes under
 * load do not fit next to the rest of the suite on 2 cores.
 */
export default defineConfig({
  ...faults,
  // everything else as the fault profile (one file at a time, long timeouts, the same global setup);
  // not mergeConfig: it would append this include to the fault profile's instead of replacing it
  test: { ...faults.test, include: ['test/faults/**/*.cluster.test.ts'] },
});
