import { notFound } from 'next/navigation';
import { BookingPage } from '../../../_components/booking-page';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default async function BookingRoute({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!UUID.test(id)) notFound();
  return <BookingPage bookingId={id.toLowerCase()} />;
}
