import { Suspense } from 'react';
import { RevealsPage } from '../_components/reveals';

export default function OpsRevealsPage() {
  return (
    <Suspense>
      <RevealsPage />
    </Suspense>
  );
}
