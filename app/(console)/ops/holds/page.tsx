import { Suspense } from 'react';
import { HoldsPage } from '../_components/holds';

export default function OpsHoldsPage() {
  return (
    <Suspense>
      <HoldsPage />
    </Suspense>
  );
}
