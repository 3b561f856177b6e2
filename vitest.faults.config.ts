import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults`: the full fault and abuse suite (test/faults/**\/*.faults.test.ts). Same global
 * setup as vitest.config.ts (a shared PostgreSQL + Kafka for the scenarios that only use them); the
 * scenarios that stop, kill or restart PostgreSQL or Kafka start instances of their own. One file at a
 * time: the scenarios measure processes competing for 2 cores, and parallel files would only add noise.
 * The reduced profile (`*.faults-lite.int.test.ts`) runs inside `npm test` via vitest.config.ts.
 */
export default defineConfig({
  resolve: { alias: { '@': path.resolve(import.meta.dirname) } },
  test: {
    include: ['test/faults/**/*.faults.test.ts'],
    exclude: ['**/node_modules/**', '.data/**', 'e2e/**'],
    globalSetup: ['./test/harness/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 20 * 60_000,
    hookTimeout: 5 * 60_000,
    reporters: ['default'],
  },
});
