import { execFile } from 'node:child_process';
import { expect, type TestContext as VitestContext } from 'vitest';
import { REPO_ROOT } from '../../../scripts/infra';
import { figure } from '../helpers/figures';

/**
 * `npm audit --omit=dev`: no high or critical advisory in the production dependency tree. The audit
 * asks the registry's advisory endpoint; when that endpoint cannot be reached (offline, a proxy that
 * refuses the bulk POST) the test is reported SKIPPED with the reason and a "[faults] … NOT VERIFIED"
 * line — never a silent pass.
 */
export async function npmAuditScenario(ctx: VitestContext, opts: { label: string }): Promise<void> {
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
    execFile('npm', ['audit', '--omit=dev', '--json'], { cwd: REPO_ROOT, timeout: 120_000, maxBuffer: 32 * 1024 * 1024 }, (_e, out, err) => resolve({ stdout: String(out), stderr: String(err) }));
  });
  let report: { metadata?: { vulnerabilities?: Record<string, number>; dependencies?: Record<string, number> }; message?: string; error?: unknown; statusCode?: number } = {};
  try { report = JSON.parse(stdout); } catch { /* not JSON: reported below */ }
  const vulnerabilities = report.metadata?.vulnerabilities;
  if (!vulnerabilities) {
    const reason = (report.message ?? stderr.split('\n').find((l) => /error|ERR/.test(l)) ?? stdout.slice(0, 200)).trim();
    figure('npm-audit', `${opts.label}: NOT VERIFIED — the registry's audit endpoint did not answer an audit (${reason})`, { verified: false, reason });
    ctx.skip(`npm audit could not reach the registry's audit endpoint: ${reason}`);
    return;
  }
  const prod = report.metadata?.dependencies?.prod ?? report.metadata?.dependencies?.total;
  figure('npm-audit', `${opts.label}: ${Object.entries(vulnerabilities).map(([k, v]) => `${k} ${v}`).join(', ')} (${prod ?? '?'} production dependencies)`, { verified: true, vulnerabilities });
  expect(vulnerabilities.high ?? 0).toBe(0);
  expect(vulnerabilities.critical ?? 0).toBe(0);
}
