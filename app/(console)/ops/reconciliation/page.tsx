import { Suspense } from 'react';
import { ReconciliationPage } from '../_components/reconciliation';

export default function OpsReconciliationPage() {
  return (
    <Suspense>
      <ReconciliationPage />
    </Suspense>
  );
}
