import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR, ensureInfra } from './infra/index';
import { bin, run } from './stack';

/**
 * `npm run test:repeat -- [--times N] [--load] [vitest files or folders...]`: a flake hunt. Runs the
 * given vitest files (all of them when none is named) N times in a row against one PostgreSQL + Kafka,
 * optionally with one core kept busy by a spinning process (`--load`: CI shares the machine), and
 * prints which tests failed in which run. A test that fails once is a flake: find its race.
 */
const args = process.argv.slice(2);
const timesAt = args.indexOf('--times');
const times = timesAt >= 0 ? Math.max(1, Number(args[timesAt + 1]) || 1) : 3;
const load = args.includes('--load');
const files = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--times');
const log = (l: string) => console.log(`[repeat] ${l}`);

async function main(): Promise<number> {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const infra = await ensureInfra({ profile: 'test', fresh: !process.env.DATABASE_URL, log });
  const spinner = load ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined;
  if (spinner) log(`one core kept busy by pid ${spinner.pid}`);
  const failures: string[] = [];
  try {
    for (let i = 1; i <= times; i++) {
      const report = path.join(DATA_DIR, `repeat-report-${i}.json`);
      fs.rmSync(report, { force: true });
      log(`run ${i} of ${times}: vitest ${files.join(' ') || '(all)'}`);
      const code = await run(bin('vitest'), ['run', '--reporter=dot', '--reporter=json', `--outputFile.json=${report}`, ...files], {
        ...process.env, TEST_ADMIN_DATABASE_URL: infra.databaseUrl, KAFKA_BROKERS: infra.kafkaBrokers, NODE_ENV: 'test',
      });
      const failed = readFailures(report);
      for (const f of failed) failures.push(`run ${i}: ${f}`);
      log(`run ${i}: exit ${code}, ${failed.length} failed`);
      if (code !== 0 && failed.length === 0) failures.push(`run ${i}: vitest exited ${code} (no report of a failed test)`);
    }
  } finally {
    spinner?.kill('SIGKILL');
    await infra.stop();
  }
  if (failures.length) log(`FLAKES or failures:\n  ${failures.join('\n  ')}`);
  else log(`${times} runs, no failure`);
  return failures.length ? 1 : 0;
}

function readFailures(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  const r = JSON.parse(fs.readFileSync(file, 'utf8')) as { testResults?: { name: string; assertionResults?: { status: string; fullName: string }[] }[] };
  return (r.testResults ?? []).flatMap((f) => (f.assertionResults ?? []).filter((a) => a.status === 'failed')
    .map((a) => `${path.relative(process.cwd(), f.name)} › ${a.fullName}`));
}

main().then((code) => process.exit(code), (e) => {
  console.error(`[repeat] ${e instanceof Error ? e.stack : String(e)}`);
  process.exit(1);
});
