import { runTs } from './bootstrap.mjs';

// `npm run infra [-- --brokers 3]`: in a process group of its own, like npm start — Ctrl-C reaches only
// this launcher, which forwards it, and run-infra stops Kafka (node by node) and PostgreSQL in order
// (under the tsx CLI the script was SIGKILLed 60 ms after the signal and left its servers running)
runTs('scripts/run-infra.ts', process.argv.slice(2), { ownGroup: true });
