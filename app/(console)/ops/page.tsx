import { OverviewPage } from './_components/overview';

export default function OpsOverviewPage() {
  return <OverviewPage />;
}
