import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const fixture = path.join(import.meta.dirname, '../../test/fixtures/process-guards.fixtures.ts');
const tsx = path.join(import.meta.dirname, '../../node_modules/.bin/tsx');

function runFixture(reason: 'closed-connection' | 'bug'): Promise<{ code: number | null; lines: { level: string; msg: string }[] }> {
  return new Promise((resolve) => {
    execFile(tsx, [fixture, reason], { timeout: 30_000 }, (error, stdout) => {
      const lines = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: string; msg: string });
      resolve({ code: error ? (error.code as number | null) ?? 1 : 0, lines });
    });
  });
}

describe('worker process guards (a PostgreSQL restart does not end the worker; a bug still does)', () => {
  it('an unawaited query rejected with the closed connection is logged and the process goes on', async () => {
    const { code, lines } = await runFixture('closed-connection');
    expect(code).toBe(0);
    expect(lines.map((l) => l.msg)).toContain('a query of a closed database connection was not awaited (database restart?); going on');
  });

  it('any other unhandled rejection ends the process with a fatal line', async () => {
    const { code, lines } = await runFixture('bug');
    expect(code).toBe(1);
    expect(lines.find((l) => l.msg === 'uncaught exception')?.level).toBe('fatal');
  });
});
