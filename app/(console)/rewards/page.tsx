import { RewardsPage } from '../../_components/rewards';

/** "Вознаграждения": the agent's own rewards, the developer manager's totals per agent. */
export default function RewardsRoute() {
  return <RewardsPage />;
}
