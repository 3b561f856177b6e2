import { counter } from '../platform/metrics';
import { ACCRUAL_STATUSES } from './schema';

/** Accruals entering a status (accrued: a paid booking recorded; payable: its sale started; void: it ended before). */
export const accrualTransitions = counter('rewards_accrual_transitions_total', 'Reward accruals entering a status (accrued | payable | void)', ['status'], {
  status: [...ACCRUAL_STATUSES],
});
