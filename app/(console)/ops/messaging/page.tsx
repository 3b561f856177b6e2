import { Suspense } from 'react';
import { MessagingPage } from '../_components/messaging';

export default function OpsMessagingPage() {
  return (
    <Suspense>
      <MessagingPage />
    </Suspense>
  );
}
