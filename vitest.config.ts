import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { '@': path.resolve(import.meta.dirname) } },
  test: {
    include: ['server/**/*.test.ts', 'test/**/*.test.ts', 'scripts/**/*.test.ts', 'app/**/*.test.ts', 'bench/**/*.test.ts'],
    exclude: ['**/node_modules/**', '.data/**', 'e2e/**', '**/*.faults.test.ts', '**/*.cluster.test.ts', '**/*.replicated.test.ts'],
    globalSetup: ['./test/harness/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
