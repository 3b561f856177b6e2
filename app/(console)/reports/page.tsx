import { Suspense } from 'react';
import { ReportsScreen } from './_components/reports-screen';
import './reports.css';

export default function ReportsPage() {
  return (
    <Suspense>
      <ReportsScreen />
    </Suspense>
  );
}
