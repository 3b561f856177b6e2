import { notFound } from 'next/navigation';
import { DealPage } from '../../../_components/deal-chat';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The deal page: the deal, its bookings and its chat with the saga's system cards. */
export default async function DealRoute({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!UUID.test(id)) notFound();
  return <DealPage dealId={id.toLowerCase()} />;
}
