'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { BookingActions, BookingSummary, LapseWarning } from './booking-panel';
import { BookingRequisites } from './requisites';
import { ErrorNotice } from './error-notice';
import { useLiveEvents } from './live';
import { SagaTimelineView } from './saga-timeline';
import { useTRPC, type RouterOutputs } from './trpc';

type Divergence = NonNullable<RouterOutputs['ops']['bookingTimeline']['divergence']>;

/** crm and chessboard disagree about this booking: say so in words, and where to repair it. */
function DivergenceNotice({ divergence }: { divergence: Divergence }) {
  const t = useTranslations('saga');
  const ts = useTranslations('status');
  const status = ts.has(divergence.objectStatus) ? ts(divergence.objectStatus) : divergence.objectStatus;
  return (
    <div className="notice notice-error" role="alert" data-testid="booking-divergence" data-kind={divergence.kind}>
      <p>
        <span aria-hidden="true">⚠ </span>
        <strong>{t('diverged')}.</strong>{' '}
        {divergence.kind === 'booking_not_held' ? t('divergedNotHeld', { status }) : t('divergedStillHeld', { status })}
      </p>
      <p><Link href="/ops/reconciliation">{t('divergedLink')}</Link></p>
    </div>
  );
}

export function BookingPage({ bookingId }: { bookingId: string }) {
  const t = useTranslations('bookingPage');
  const trpc = useTRPC();
  useLiveEvents(null);
  const booking = useQuery(trpc.booking.byId.queryOptions({ bookingId }));
  const object = useQuery(trpc.chessboard.object.queryOptions(
    { propertyObjectId: booking.data?.propertyObjectId ?? '' },
    { enabled: !!booking.data },
  ));
  const timeline = useQuery(trpc.ops.bookingTimeline.queryOptions({ bookingId }, {
    // every 2 s while a hop is still pending; live events refresh it too
    refetchInterval: (q) => (q.state.data?.hasPending ? 2000 : false),
  }));

  const o = object.data?.object;
  const divergence = timeline.data?.divergence ?? null;
  return (
    <section className="page booking-page">
      <nav className="breadcrumbs" aria-label={t('breadcrumbs')}>
        <Link href="/bookings">{t('allBookings')}</Link> / <span>{o ? t('flatBooking', { number: o.number }) : '…'}</span>
      </nav>
      <h1 className="page-title">
        {o ? t('flatBooking', { number: o.number }) : t('title')}
      </h1>
      <ErrorNotice error={booking.error} />
      {booking.isPending ? <p className="muted">{t('loading')}</p> : null}
      {booking.data ? (
        <div className="booking-layout">
          <div className="card">
            <h2>{t('summary')}</h2>
            {o ? (
              <p>
                {t('object')}{' '}
                <Link href={`/chessboard?project=${o.projectId}&building=${o.buildingId}&object=${o.id}`} data-testid="object-link">
                  {o.number}
                </Link>{' '}
                <span className="muted small">{o.projectName} · {o.buildingName}</span>
              </p>
            ) : null}
            <LapseWarning booking={booking.data} />
            {divergence ? <DivergenceNotice divergence={divergence} /> : null}
            <BookingSummary booking={booking.data} showLink={false} />
            <BookingRequisites booking={booking.data} />
            {/* no Confirm / Extend as if all were fine while crm and chessboard disagree */}
            {divergence ? null : <BookingActions booking={booking.data} />}
          </div>
          <div className="card timeline-card">
            <SagaTimelineView bookingId={bookingId} query={timeline} />
          </div>
        </div>
      ) : null}
    </section>
  );
}
