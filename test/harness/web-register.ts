/**
 * Runs the web's Next.js start-up hook (`register` of instrumentation.ts) the way `next start` does at
 * boot, without a build: scripts/kafka-topics.int.test.ts drives it. Prints `registered` when it returned.
 */
import { register } from '../../instrumentation';

await register();
console.log('registered');
process.exit(0);
