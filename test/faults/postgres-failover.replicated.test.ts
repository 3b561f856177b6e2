import { it } from 'vitest';
import { postgresFailoverScenario } from './scenarios/postgres-failover';

/**
 * The replicated-PostgreSQL profile (`npm run test:faults -- --pg-replicas 1`): a primary and a
 * synchronous streaming replica of the file's own, 2 web + 2 worker processes under a booking load,
 * the primary killed -9 and the replica promoted.
 */
it('the primary killed (-9) and its synchronous replica promoted under booking load: 0 acknowledged lost, 0 applied twice, a command succeeds again within 10 s', async () => {
  // refusals: 4 lanes, each retrying every 200 ms, for at most the 10 s of the recovery budget
  await postgresFailoverScenario({ objects: 3000, promoteAfterMs: 1000, recoverBudgetS: 10, refusedBudget: 200, label: 'postgres failover' });
});
