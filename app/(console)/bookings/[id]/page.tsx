import { cookies } from 'next/headers';
import { notFound, redirect } from 'next/navigation';
import { resolveSession, SESSION_COOKIE } from '@/server/auth/session';
import { bookingIdByPrefix } from '@/server/crm/queries';
import { getServices } from '@/server/main/web-services';
import { BookingPage } from '../../../_components/booking-page';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SHORT = /^[0-9a-f]{8}$/i;

export default async function BookingRoute({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (SHORT.test(id)) {
    // the short id lists show: redirect to the one booking of the user's tenant scope it
    // names; none or several → 404, never a guess. The console layout has already required a session.
    const { database } = getServices();
    const session = await resolveSession(database.db, (await cookies()).get(SESSION_COOKIE)?.value);
    if (!session) redirect('/login');
    const full = await bookingIdByPrefix(database.db, session.actor, id);
    if (!full) notFound();
    redirect(`/bookings/${full}`);
  }
  if (!UUID.test(id)) notFound();
  return <BookingPage bookingId={id.toLowerCase()} />;
}
