import type { REWARD_KINDS } from './schema';

export type RewardKind = (typeof REWARD_KINDS)[number];

/** What booking-paid tells rewards: the programme's rule, the price it was applied to, the amount. */
export interface BookingReward {
  kind: RewardKind;
  value: number;
  price: number | null;
  amount: number;
}

/**
 * Pure: the agent's reward for a paid booking under its programme's rule — `percent` of the flat's
 * price (kopecks rounded half up) or a `fixed` sum; null when the programme sets no reward. A
 * percentage of an unknown price (crm's view has not seen the object's upsert) is 0, not a guess: the
 * event still records the rule and the missing price, so the gap shows.
 */
export function rewardFor(rule: { kind: RewardKind | null; value: number | null }, price: number | null): BookingReward | null {
  if (rule.kind === null || rule.value === null) return null;
  if (rule.kind === 'fixed') return { kind: 'fixed', value: rule.value, price, amount: rule.value };
  const amount = price === null ? 0 : Math.round(price * rule.value) / 100;
  return { kind: 'percent', value: rule.value, price, amount };
}
