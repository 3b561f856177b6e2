import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR, REPO_ROOT } from '../../scripts/infra/index';
import { bin, run } from '../../scripts/stack';

/**
 * The bench builds and serves the web app from a snapshot of the sources in .data/bench-web instead
 * of the repository's own .next: `next build` there cannot pull the build from under a `next start`
 * or `next dev` that someone else runs from the working tree, and the measured build is exactly the
 * sources as they were when the bench started. The snapshot has no lockfile and no node_modules, so
 * Next.js takes the repository as the workspace root and resolves packages from its node_modules.
 */
export const WEB_DIR = path.join(DATA_DIR, 'bench-web');
const COPIED = ['app', 'server', 'scripts', 'instrumentation.ts', 'proxy.ts', 'next.config.mjs', 'package.json', 'tsconfig.json', 'next-env.d.ts'];

function newestSource(): number {
  let newest = 0;
  const walk = (p: string) => {
    const st = fs.statSync(p);
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e));
    else newest = Math.max(newest, st.mtimeMs);
  };
  for (const entry of COPIED) if (fs.existsSync(path.join(REPO_ROOT, entry))) walk(path.join(REPO_ROOT, entry));
  return newest;
}

/** Copies the sources (tests left out) and runs `next build` unless the snapshot's build is newer than every source. */
export async function buildWebSnapshot(env: NodeJS.ProcessEnv, log: (l: string) => void, logFile: string): Promise<string> {
  const buildId = path.join(WEB_DIR, '.next', 'BUILD_ID');
  if (fs.existsSync(buildId) && fs.statSync(buildId).mtimeMs > newestSource()) {
    log(`web build in ${path.relative(REPO_ROOT, WEB_DIR)} is up to date`);
    return WEB_DIR;
  }
  fs.mkdirSync(WEB_DIR, { recursive: true });
  for (const entry of fs.readdirSync(WEB_DIR)) if (entry !== '.next') fs.rmSync(path.join(WEB_DIR, entry), { recursive: true, force: true });
  for (const entry of COPIED) {
    const from = path.join(REPO_ROOT, entry);
    if (!fs.existsSync(from)) continue;
    fs.cpSync(from, path.join(WEB_DIR, entry), { recursive: true, filter: (src) => !/\.test\.tsx?$/.test(src) });
  }
  log(`building the web app (next build) in ${path.relative(REPO_ROOT, WEB_DIR)}; output in ${path.relative(REPO_ROOT, logFile)}`);
  const t0 = performance.now();
  const code = await run(bin('next'), ['build', WEB_DIR], { ...env, NEXT_TELEMETRY_DISABLED: '1' }, { logFile });
  if (code !== 0) throw new Error(`next build failed (exit ${code}); see ${logFile}`);
  log(`next build done in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return WEB_DIR;
}
