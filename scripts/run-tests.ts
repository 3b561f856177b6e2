import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { createTopics, dropDatabase, ensureDatabase, ensureInfra, REPO_ROOT, DATA_DIR } from './infra/index';
import { freePort } from './infra/postgres';
import { runMigrations } from '../server/platform/migrate';
import { seed } from './seed';
import { bin, buildWeb, localProfileDataKey, run, startProcess, waitForHttp, type Proc } from './stack';

/**
 * `npm test`: real PostgreSQL + real Kafka (started here unless configured), then
 *   1. vitest — unit and integration tests (each file clones a migrated template database and uses its own topic prefix),
 *   2. Playwright — the built web app + worker on a seeded database, driven in Debian Chromium.
 * `--faults` runs the fault suite (`*.faults.test.ts`) instead. Prints "N passed, N failed" last.
 */
const log = (l: string) => console.log(`[test] ${l}`);
const faults = process.argv.includes('--faults');
const only = process.argv.includes('--unit') ? 'unit' : process.argv.includes('--e2e') ? 'e2e' : 'all';
// `npm test -- --e2e e2e/grid.spec.ts` runs only the named specs (vitest files with `--unit`)
const named = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--brokers' && all[i - 1] !== '--pg-replicas');

interface Tally { passed: number; failed: number; skipped: number }

async function main(): Promise<number> {
  const t0 = Date.now();
  fs.mkdirSync(DATA_DIR, { recursive: true });
  // `npm test -- --pg-replicas 1` (no DATABASE_URL): the run's PostgreSQL is a primary + synchronous replica.
  // The fault profile of that name starts its own pair per scenario (it kills the primary).
  const pgReplicas = !faults && process.argv.includes('--pg-replicas') ? 1 : 0;
  const infra = await ensureInfra({ profile: 'test', fresh: !process.env.DATABASE_URL, log: (l) => log(l), pgReplicas });
  const tally: Tally = { passed: 0, failed: 0, skipped: 0 };
  const procs: Proc[] = [];
  let e2eDb: string | undefined;
  try {
    const baseEnv: NodeJS.ProcessEnv = { ...process.env, TEST_ADMIN_DATABASE_URL: infra.databaseUrl, KAFKA_BROKERS: infra.kafkaBrokers, NODE_ENV: 'test' };

    if (only !== 'e2e') {
      log(faults ? 'running the fault suite (vitest)' : 'running unit and integration tests (vitest)');
      const report = path.join(DATA_DIR, 'vitest-report.json');
      fs.rmSync(report, { force: true });
      const args = ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`];
      // `npm run test:faults -- --brokers 3`: the multi-broker scenarios (a 3-node cluster of their own);
      // `-- --pg-replicas 1`: the PostgreSQL failover scenarios (a primary + synchronous replica of their own)
      if (faults) {
        args.push('--config', process.argv.includes('--brokers') ? 'vitest.cluster.config.ts'
          : process.argv.includes('--pg-replicas') ? 'vitest.replicated.config.ts' : 'vitest.faults.config.ts');
      }
      if (only === 'unit') args.push(...named);
      const code = await run(bin('vitest'), args, baseEnv);
      const counted = readVitest(report);
      if (!counted) {
        tally.failed += 1;
        log(`vitest exited ${code} without a report`);
      } else {
        add(tally, counted);
        if (code !== 0 && counted.failed === 0) { tally.failed += 1; log(`vitest exited ${code}`); }
      }
    }

    if (!faults && only !== 'unit') {
      log('preparing the end-to-end stack (seeded database, next build, web + worker)');
      // one database per run: two checkouts may share one PostgreSQL (DATABASE_URL) at once
      e2eDb = `pin_e2e_${process.pid}`;
      await dropDatabase(infra.databaseUrl, e2eDb);
      const dbUrl = await ensureDatabase(infra.databaseUrl, e2eDb);
      await runMigrations(dbUrl);
      const prefix = `e2e${Date.now().toString(36)}.`;
      await createTopics(infra.kafkaBrokers, prefix);
      await seed(dbUrl, log);
      // e2e/ops.spec.ts drives the hold-expiration safety net and the Delisted clean-up by hand ("Run now"):
      // paused from the start, so the seeded stuck holds are still stuck when it looks at them, and the
      // nightly clean-up has not run when e2e/deadlines.spec.ts reads a fresh installation's overview
      const control = postgres(dbUrl, { max: 1, onnotice: () => {} });
      await control`INSERT INTO ops.job_controls (job, paused, changed_by, changed_at, reason)
        SELECT job, true, 'e2e', now(), 'e2e: ops.spec runs it by hand' FROM unnest(ARRAY['property-object-hold-expiration', 'delisted-retention']) AS job
        ON CONFLICT (job) DO UPDATE SET paused = true`;
      await control.end();
      const port = await freePort();
      const env: NodeJS.ProcessEnv = {
        ...process.env, DATABASE_URL: dbUrl, KAFKA_BROKERS: infra.kafkaBrokers, KAFKA_TOPIC_PREFIX: prefix,
        NODE_ENV: 'production', PROFILE_DATA_KEY: localProfileDataKey(DATA_DIR), WORKER_METRICS_PORT: String(await freePort()), WEB_METRICS_PORT: String(await freePort()), LOG_LEVEL: 'info',
        OUTBOX_RELAY_SCHEDULE: '* * * * * *',
      };
      await buildWeb(env, log, process.env.CI === 'true');
      const logDir = path.join(DATA_DIR, 'e2e-logs');
      fs.mkdirSync(logDir, { recursive: true });
      procs.push(startProcess('worker', bin('tsx'), ['server/main/worker.ts'], env, path.join(logDir, 'worker.log')));
      procs.push(startProcess('web', bin('tsx'), ['server/main/web-server.ts', '-p', String(port), '-H', '127.0.0.1'], env, path.join(logDir, 'web.log')));
      await waitForHttp(`http://127.0.0.1:${port}/api/health`, 120_000, log);
      log(`web on http://127.0.0.1:${port}; running Playwright in Debian Chromium`);
      const report = path.join(DATA_DIR, 'playwright-report.json');
      fs.rmSync(report, { force: true });
      const code = await run(bin('playwright'), ['test', ...(only === 'e2e' ? named : [])], {
        ...env, NODE_ENV: 'test', E2E_BASE_URL: `http://127.0.0.1:${port}`, E2E_WORKER_METRICS: `http://127.0.0.1:${env.WORKER_METRICS_PORT}`,
        PLAYWRIGHT_JSON_OUTPUT_NAME: report,
        // `--screenshots`: the specs rewrite the README's screenshots in docs/screenshots (else they keep them in e2e/screenshots/docs)
        ...(process.argv.includes('--screenshots') ? { E2E_DOCS_SCREENSHOTS: '1' } : {}),
      });
      const counted = readPlaywright(report);
      if (!counted) { tally.failed += 1; log(`playwright exited ${code} without a report`); }
      else {
        add(tally, counted);
        if (code !== 0 && counted.failed === 0) { tally.failed += 1; log(`playwright exited ${code}`); }
      }
    }
  } finally {
    await Promise.allSettled(procs.map((p) => p.stop()));
    if (e2eDb) await dropDatabase(infra.databaseUrl, e2eDb).catch(() => {});
    await infra.stop();
  }
  log(`finished in ${Math.round((Date.now() - t0) / 1000)} s`);
  console.log(`${tally.passed} passed, ${tally.failed} failed, ${tally.skipped} skipped`);
  return tally.failed > 0 || tally.passed === 0 ? 1 : 0;
}

function add(t: Tally, c: Tally) { t.passed += c.passed; t.failed += c.failed; t.skipped += c.skipped; }

function readVitest(file: string): Tally | null {
  if (!fs.existsSync(file)) return null;
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { passed: r.numPassedTests ?? 0, // a file that fails to load counts as a failure even when no test in it ran
    failed: Math.max(r.numFailedTests ?? 0, r.numFailedTestSuites ?? 0), skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0) };
}

function readPlaywright(file: string): Tally | null {
  if (!fs.existsSync(file)) return null;
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  const s = r.stats ?? {};
  return { passed: (s.expected ?? 0) + (s.flaky ?? 0), failed: (s.unexpected ?? 0) + (r.errors?.length ?? 0), skipped: s.skipped ?? 0 };
}

main().then((code) => process.exit(code), (e) => {
  console.error(`[test] ${e instanceof Error ? e.stack : String(e)}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
void REPO_ROOT;
