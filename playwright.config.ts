import { defineConfig, devices } from '@playwright/test';

/**
 * E2E against a running stack (web + worker + Kafka + seeded PostgreSQL); the test script starts
 * them, so there is no webServer here. Debian's Chromium is used; browsers are never downloaded.
 */
export default defineConfig({
  testDir: './e2e',
  testMatch: '**/*.spec.ts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  // json: scripts/run-tests.ts reads the counts (PLAYWRIGHT_JSON_OUTPUT_NAME) for the closing "N passed, N failed" line
  reporter: [['list'], ['html', { outputFolder: 'playwright-report', open: 'never' }], ['json']],
  outputDir: 'test-results',
  use: {
    baseURL: process.env.E2E_BASE_URL ?? 'http://127.0.0.1:3000',
    screenshot: 'on',
    trace: 'retain-on-failure',
    viewport: { width: 1600, height: 1000 },
    locale: 'ru-RU',
    timezoneId: 'Europe/Moscow',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'], viewport: { width: 1600, height: 1000 } } }],
});
