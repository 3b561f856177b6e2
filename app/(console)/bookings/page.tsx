import { Suspense } from 'react';
import { BookingsList } from '../../_components/bookings-list';

export default function BookingsPage() {
  return (
    <Suspense>
      <BookingsList />
    </Suspense>
  );
}
