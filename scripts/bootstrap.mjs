// Plain JS (no dependencies): installs node_modules when missing, then hands over to a TS script via tsx.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function ensureDependencies() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  // patches/ are applied here too: an install may have skipped the postinstall script (--ignore-scripts)
  if (existsSync(marker) && existsSync(path.join(root, 'node_modules', '.bin', 'tsx'))) return applyPatches();
  const ci = existsSync(path.join(root, 'package-lock.json'));
  console.log(`[setup] installing dependencies (npm ${ci ? 'ci' : 'install'}) ...`);
  const r = spawnSync('npm', [ci ? 'ci' : 'install', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('[setup] npm install failed');
    process.exit(r.status ?? 1);
  }
  applyPatches();
}

/** patch-package: applies patches/*.patch, a no-op for those already applied; a patch that no longer fits stops here. */
function applyPatches() {
  const r = spawnSync(path.join(root, 'node_modules', '.bin', 'patch-package'), ['--error-on-fail'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    console.error('[setup] a dependency patch in patches/ failed to apply (see above): check whether upstream fixed it, then drop the patch');
    process.exit(r.status ?? 1);
  }
}

/**
 * Runs `tsx <script> ...args`, forwarding signals, and exits with its code.
 *
 * `ownGroup`: the script and everything it starts run in a process group of their own, so that Ctrl-C
 * in a terminal (SIGINT to the whole foreground group) reaches only this process, which forwards it to
 * the script: the script then stops its children in order (npm start: web and worker before Kafka and
 * PostgreSQL) instead of all of them getting the signal at once.
 */
export function runTs(script, args, { ownGroup = false } = {}) {
  const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
  // ownGroup: node with tsx's loader in the same process (the tsx CLI relays a signal to its child and
  // SIGKILLs it when the child has not reported the signal within 30 ms — too short on a busy machine)
  const child = ownGroup
    ? spawn(process.execPath, ['--import', 'tsx', path.join(root, script), ...args], { cwd: root, stdio: 'inherit', detached: true })
    : spawn(tsx, [path.join(root, script), ...args], { cwd: root, stdio: 'inherit' });
  for (const sig of ownGroup ? ['SIGINT', 'SIGTERM', 'SIGHUP'] : ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => child.kill(sig === 'SIGHUP' ? 'SIGTERM' : sig));
  }
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
}
