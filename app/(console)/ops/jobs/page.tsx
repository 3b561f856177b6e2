import { Suspense } from 'react';
import { JobsPage } from '../_components/jobs';

export default function OpsJobsPage() {
  return (
    <Suspense>
      <JobsPage />
    </Suspense>
  );
}
