import { it } from 'vitest';
import { npmAuditScenario } from './scenarios/npm-audit';

/** `npm audit --omit=dev` reports no high or critical advisory (SKIPPED, with the reason, when the registry cannot audit). */
it('npm audit --omit=dev: no high or critical vulnerability', async (ctx) => {
  await npmAuditScenario(ctx, { label: 'npm audit --omit=dev' });
}, 150_000);
