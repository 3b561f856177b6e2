import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults -- --brokers 3`: the multi-broker fault scenarios (server/faults/**\/*.cluster.test.ts)
 * on a local 3-node Kafka cluster each file starts for itself (scripts/infra/kafka-cluster.ts); the global
 * setup's PostgreSQL holds the scenarios' databases. A separate profile: 3 JVMs + 4 Node processes under
 * load do not fit next to the rest of the suite on 2 cores.
 */
export default defineConfig({
  resolve: { alias: { '@': path.resolve(import.meta.dirname) } },
  test: {
    include: ['server/faults/**/*.cluster.test.ts'],
    exclude: ['**/node_modules/**', '.data/**', 'e2e/**'],
    globalSetup: ['./server/testing/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 20 * 60_000,
    hookTimeout: 5 * 60_000,
    reporters: ['default'],
  },
});
