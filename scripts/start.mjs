import { ensureDependencies, runTs } from './bootstrap.mjs';

ensureDependencies();
runTs('scripts/start-stack.ts', process.argv.slice(2), { ownGroup: true });
