// Plain JS (no dependencies): installs node_modules when missing, then hands over to a TS script via tsx.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyPatchesOrExit } from './patch-dependencies.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function ensureDependencies() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  // scripts/patch-dependencies.mjs runs here too: an install may have skipped the postinstall script
  if (existsSync(marker) && existsSync(path.join(root, 'node_modules', '.bin', 'tsx'))) return applyPatchesOrExit('setup');
  const ci = existsSync(path.join(root, 'package-lock.json'));
  console.log(`[setup] installing dependencies (npm ${ci ? 'ci' : 'install'}) ...`);
  const r = spawnSync('npm', [ci ? 'ci' : 'install', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('[setup] npm install failed');
    process.exit(r.status ?? 1);
  }
  applyPatchesOrExit('setup');
}

/** Runs `tsx <script> ...args`, forwarding signals, and exits with its code. */
export function runTs(script, args) {
  const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
  const child = spawn(tsx, [path.join(root, script), ...args], { cwd: root, stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
}
