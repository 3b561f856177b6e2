'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useFormatter, useTranslations } from 'next-intl';
import Link from 'next/link';
import { useState } from 'react';
import { ConfirmDialog, type DialogField } from './confirm-dialog';
import { RequisitesPicker } from './requisites';
import { Countdown } from './countdown';
import { useNow, useNowWhile } from './clock';
import { useCan, useSessionUser } from './session';
import { ACTIVE_BOOKING_STATUSES } from './status';
import { Time } from './time';
import { useTRPC, type RouterOutputs } from './trpc';
import './notices.css';

export type BookingDetails = RouterOutputs['booking']['byId'];

/** How long before a Booked hold lapses the user who may extend it is warned. */
export const LAPSE_WARNING_MS = 2 * 3600_000;
/** … and before a reserve lapses, the user who may confirm it. */
export const RESERVE_WARNING_MS = 15 * 60_000;

export type BookingActionKey = 'uploadContract' | 'uploadReceipt' | 'confirm' | 'confirmPayment' | 'extend' | 'startSale' | 'cancel';
const ACTION_ORDER: BookingActionKey[] = ['uploadContract', 'uploadReceipt', 'confirm', 'confirmPayment', 'extend', 'startSale', 'cancel'];

/** Which transitions the booking's state allows (the server decides again; this only picks buttons). */
export function actionsForState(b: Pick<BookingDetails, 'status' | 'paymentStatus'>): Record<BookingActionKey, boolean> {
  return {
    uploadContract: b.status === 'Reserved' && b.paymentStatus === 'Pending',
    uploadReceipt: b.status === 'AwaitingPayment' && b.paymentStatus === 'ContractUploaded',
    confirm: b.status === 'Reserved' && b.paymentStatus === 'NotRequired',
    confirmPayment: b.status === 'AwaitingPayment' && b.paymentStatus === 'ReceiptUploaded',
    extend: b.status === 'Booked',
    startSale: b.status === 'Booked',
    cancel: ACTIVE_BOOKING_STATUSES.includes(b.status),
  };
}

const newKey = () => `ui:${crypto.randomUUID()}`;

export function useInvalidateAll() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries(trpc.booking.pathFilter()),
      queryClient.invalidateQueries(trpc.deal.pathFilter()),
      queryClient.invalidateQueries(trpc.chessboard.pathFilter()),
      queryClient.invalidateQueries(trpc.ops.pathFilter()),
    ]);
}

export function BookingActions({ booking }: { booking: BookingDetails }) {
  const t = useTranslations('booking');
  const trpc = useTRPC();
  const can = useCan();
  const user = useSessionUser();
  const invalidate = useInvalidateAll();
  const queryClient = useQueryClient();
  const [active, setActive] = useState<BookingActionKey | null>(null);
  // the booking's version when the dialog opened: a newer one while it is open is someone else's change
  const [openedVersion, setOpenedVersion] = useState<number | null>(null);
  const [done, setDone] = useState<BookingActionKey | null>(null);
  const [idempotencyKey, setIdempotencyKey] = useState(newKey);
  // a paid booking made without the buyer's requisites gets them with its contract (the contract is
  // drawn up for them; crm refuses CRM_BOOKING_REQUISITES_REQUIRED otherwise), so the dialog asks here
  const [requisites, setRequisites] = useState<{ setId: string; version: number } | null>(null);
  const needsRequisites = !booking.requisiteSetId;

  /**
   * The mutation's answer is the booking as the command left it: put it in the cache at once, so the
   * new status and the buttons it allows show without waiting for the live feed; the
   * refetch that follows brings the timeline and the chessboard.
   */
  const applied = (action: BookingActionKey) => (result: Partial<BookingDetails>) => {
    queryClient.setQueryData(trpc.booking.byId.queryKey({ bookingId: booking.id }), (old) => (old ? { ...old, ...result, deal: old.deal, program: old.program, timeline: old.timeline } : old));
    setActive(null);
    setDone(action);
    void invalidate();
  };
  // a refusal usually means the booking moved on: refetch, so the page shows what the error names
  const refused = () => void invalidate();
  const mutations = {
    uploadContract: useMutation(trpc.booking.uploadContract.mutationOptions({ onSuccess: applied('uploadContract'), onError: refused })),
    uploadReceipt: useMutation(trpc.booking.uploadReceipt.mutationOptions({ onSuccess: applied('uploadReceipt'), onError: refused })),
    confirm: useMutation(trpc.booking.confirm.mutationOptions({ onSuccess: applied('confirm'), onError: refused })),
    confirmPayment: useMutation(trpc.booking.confirmPayment.mutationOptions({ onSuccess: applied('confirmPayment'), onError: refused })),
    extend: useMutation(trpc.booking.extend.mutationOptions({ onSuccess: applied('extend'), onError: refused })),
    startSale: useMutation(trpc.booking.startSale.mutationOptions({ onSuccess: applied('startSale'), onError: refused })),
    cancel: useMutation(trpc.booking.cancel.mutationOptions({ onSuccess: applied('cancel'), onError: refused })),
  };
  const anyPending = Object.values(mutations).some((m) => m.isPending);
  const doneNotice = done ? (
    <p className="notice notice-success" role="status" data-testid="command-done">
      <span aria-hidden="true">✓ </span>{t(`done.${done}`, { status: t(`status.${booking.status}`) })}
    </p>
  ) : null;

  const byState = actionsForState(booking);
  // past its deadline by this browser's clock a reserve is over: no confirm is offered while the
  // expiry is on its way (the server decides either way)
  const reserveRuns = booking.status === 'Reserved' || booking.status === 'AwaitingPayment';
  const now = useNowWhile(reserveRuns);
  const reserveOver = reserveRuns && now > 0 && booking.reserveExpiresAt.getTime() <= now;
  const allowed = ACTION_ORDER.filter((a) => {
    if (!byState[a] || !can(`booking.${a}`)) return false;
    if (reserveOver && (a === 'confirm' || a === 'confirmPayment' || a === 'uploadContract' || a === 'uploadReceipt')) return false;
    // an agent or an investor cancels only the bookings it created (the command checks this too)
    if (a === 'cancel' && (user.role === 'agent' || user.role === 'investor') && booking.createdBy !== user.id) return false;
    return true;
  });
  const expiredNote = reserveOver ? (
    <p className="notice notice-warning" role="status" data-testid="reserve-over">
      <span aria-hidden="true">⌛ </span>{t('reserveOver')} <Time value={booking.reserveExpiresAt} />
    </p>
  ) : null;
  if (allowed.length === 0) return <>{doneNotice}{expiredNote}</>;

  const fields: Partial<Record<BookingActionKey, DialogField[]>> = {
    cancel: [{ name: 'reason', label: t('fields.reason'), required: true, multiline: true }],
    uploadContract: [{ name: 'document', label: t('fields.contract'), required: true, hint: t('fields.documentHint'), defaultValue: `contract-${booking.id.slice(0, 8)}.pdf` }],
    uploadReceipt: [{ name: 'document', label: t('fields.receipt'), required: true, hint: t('fields.documentHint'), defaultValue: `receipt-${booking.id.slice(0, 8)}.pdf` }],
  };

  const run = (action: BookingActionKey, values: Record<string, string>) => {
    // the version the user decided on (when the dialog opened), not the one the live feed refetched since:
    // a booking someone else changed meanwhile is refused with what it is now, never acted on blindly
    const base = { bookingId: booking.id, expectedVersion: openedVersion ?? booking.version, idempotencyKey };
    switch (action) {
      case 'cancel':
        return mutations.cancel.mutate({ ...base, reason: values.reason.trim() });
      case 'uploadContract':
        return mutations.uploadContract.mutate({ ...base, document: values.document.trim(), ...(needsRequisites && requisites ? { requisites } : {}) });
      case 'uploadReceipt':
        return mutations.uploadReceipt.mutate({ ...base, document: values.document.trim() });
      default:
        return mutations[action].mutate(base);
    }
  };

  const current = active ? mutations[active] : null;
  // someone changed the booking while this dialog was open: confirm stays off until the user has read what changed
  const stale = openedVersion !== null && booking.version !== openedVersion && !current?.isPending;
  // once read, the change may have taken the action away (someone confirmed first): say so, keep confirm off
  const unavailable = active !== null && !stale && !current?.isPending && !allowed.includes(active);
  // DESIGN decision 10: a booking is extended at most its program's max_extensions times; the manager sees
  // the new deadline and which extension this is before confirming, and the button is off at the cap
  const maxExtensions = booking.program.maxExtensions;
  const atExtensionCap = booking.extensionCount >= maxExtensions;
  const nextDeadline = booking.bookingExpiresAt ? new Date(booking.bookingExpiresAt.getTime() + booking.program.bookingDurationHours * 3_600_000) : null;
  return (
    <>
    {doneNotice}
    {expiredNote}
    <div className="actions" role="group" aria-label={t('actionsLabel')} aria-busy={anyPending || undefined}>
      {allowed.map((a) => (
        <button
          key={a}
          type="button"
          className={`btn ${a === 'cancel' ? 'btn-danger-outline' : 'btn-primary'}`}
          data-action={a}
          disabled={anyPending || (a === 'extend' && atExtensionCap)}
          aria-describedby={a === 'extend' && atExtensionCap ? 'extension-cap' : undefined}
          onClick={() => {
            mutations[a].reset();
            setIdempotencyKey(newKey());
            setDone(null);
            setOpenedVersion(booking.version);
            setRequisites(null);
            setActive(a);
          }}
        >
          {t(`actions.${a}`)}
        </button>
      ))}
      {allowed.includes('extend') && atExtensionCap ? (
        <p id="extension-cap" className="small muted" data-testid="extension-cap">{t('extension.cap', { max: maxExtensions })}</p>
      ) : null}
      <ConfirmDialog
        open={active !== null}
        title={active ? t(`confirm.${active}.title`) : ''}
        message={active ? (
          <>
            {stale ? <ConcurrentChange booking={booking} onRead={() => setOpenedVersion(booking.version)} /> : null}
            {unavailable ? (
              <p className="notice notice-warning" role="alert" data-testid="action-unavailable">
                <span aria-hidden="true">⚠ </span>{t('concurrent.unavailable', { status: t(`status.${booking.status}`) })}
              </p>
            ) : null}
            {t(`confirm.${active}.message`)}
            {active === 'extend' && nextDeadline ? <ExtensionPreview until={nextDeadline} n={booking.extensionCount + 1} max={maxExtensions} /> : null}
            {active === 'uploadContract' && needsRequisites ? <RequisitesPicker tenantId={booking.tenantId} value={requisites} onChange={setRequisites} required /> : null}
          </>
        ) : null}
        confirmLabel={active ? t(`actions.${active}`) : ''}
        fields={active ? fields[active] ?? [] : []}
        danger={active === 'cancel'}
        pending={current?.isPending}
        blocked={stale || unavailable}
        error={current?.error}
        onConfirm={(values) => active && run(active, values)}
        onClose={() => setActive(null)}
      />
    </div>
    </>
  );
}

/** The extend dialog's preview: the deadline after this extension and which extension of the allowed ones it is. */
function ExtensionPreview({ until, n, max }: { until: Date; n: number; max: number }) {
  const t = useTranslations('booking');
  const format = useFormatter();
  return (
    <p data-testid="extension-preview"><strong>
      {t('extension.next', { date: format.dateTime(until, { dateStyle: 'medium', timeStyle: 'short' }), n, max })}
    </strong></p>
  );
}

/**
 * Shown in an open command dialog when the booking changed meanwhile (the live feed refetched it):
 * who did what and when, from the booking's latest timeline entry. The server would
 * refuse the stale command anyway (expectedVersion); this says why before the user tries.
 */
function ConcurrentChange({ booking, onRead }: { booking: BookingDetails; onRead: () => void }) {
  const t = useTranslations('booking');
  const trpc = useTRPC();
  const last = booking.timeline.at(-1);
  const userId = last && last.actorType === 'user' ? last.actorId : null;
  const names = useQuery(trpc.auth.userNames.queryOptions({ ids: userId ? [userId] : [] }, { enabled: !!userId, staleTime: 300_000 }));
  const who = userId ? names.data?.[userId] ?? t('concurrent.someone') : t('concurrent.system');
  return (
    <p className="notice notice-warning" role="alert" data-testid="concurrent-change">
      <span aria-hidden="true">⚠ </span>
      {t('concurrent.changed', { status: t(`status.${booking.status}`), who })}{' '}
      {last ? <Time value={last.at} seconds /> : null}{' '}
      <button type="button" className="btn btn-small" data-action="reread" onClick={onRead}>{t('concurrent.reread')}</button>
    </p>
  );
}

/** A warning shown while a hold the user can act on is about to lapse. */
export function LapseWarning({ booking }: { booking: BookingDetails }) {
  const t = useTranslations('booking');
  const can = useCan();
  const now = useNow();
  if (!now) return null;
  if (booking.status === 'Booked' && booking.bookingExpiresAt && can('booking.extend')) {
    const left = booking.bookingExpiresAt.getTime() - now;
    if (left < LAPSE_WARNING_MS) {
      return (
        <p className="notice notice-warning" role="alert" data-testid="lapse-warning">
          {left > 0 ? t('lapseWarning.booked') : t('lapseWarning.bookedOverdue')} <Countdown until={booking.bookingExpiresAt} />
        </p>
      );
    }
  }
  if ((booking.status === 'Reserved' || booking.status === 'AwaitingPayment') && (can('booking.confirm') || can('booking.confirmPayment'))) {
    const left = booking.reserveExpiresAt.getTime() - now;
    if (left < RESERVE_WARNING_MS) {
      return (
        <p className="notice notice-warning" role="alert" data-testid="lapse-warning">
          {left > 0 ? t('lapseWarning.reserved') : t('lapseWarning.reservedOverdue')} <Countdown until={booking.reserveExpiresAt} />
        </p>
      );
    }
  }
  return null;
}

/** Status, deal, program, payment and timers of one booking. */
export function BookingSummary({ booking, showLink = true }: { booking: BookingDetails; showLink?: boolean }) {
  const t = useTranslations('booking');
  const trpc = useTRPC();
  const names = useQuery(trpc.auth.userNames.queryOptions({ ids: booking.createdBy ? [booking.createdBy] : [] }, { enabled: !!booking.createdBy, staleTime: 300_000 }));
  const reserveRunning = booking.status === 'Reserved' || booking.status === 'AwaitingPayment';
  return (
    <div className="booking-summary">
      <div className="summary-head">
        <span className={`badge booking-${booking.status}`} data-testid="booking-status">{t(`status.${booking.status}`)}</span>
        {showLink ? (
          <Link href={`/bookings/${booking.id}`} className="small" data-testid="booking-link">
            {t('openBooking')}
          </Link>
        ) : null}
      </div>
      <dl className="kv">
        <dt>{t('deal')}</dt>
        <dd>
          <Link href={`/deals/${booking.dealId}`} data-testid="deal-link">{booking.deal.title}</Link>{' '}
          <span className="muted small">({t(`dealStatus.${booking.deal.status}`)})</span>
        </dd>
        <dt>{t('program')}</dt>
        <dd>
          {booking.program.name} · {booking.program.isPaid ? t('paid') : t('free')}
        </dd>
        <dt>{t('payment')}</dt>
        <dd>{t(`paymentStatus.${booking.paymentStatus}`)}</dd>
        <dt>{t('holder')}</dt>
        <dd>{booking.createdBy ? names.data?.[booking.createdBy] ?? booking.createdBy.slice(0, 8) : '—'}</dd>
        <dt>{t('createdAt')}</dt>
        <dd><Time value={booking.createdAt} /></dd>
        <dt>{t('reserveExpiresAt')}</dt>
        <dd>
          <Time value={booking.reserveExpiresAt} />
          {reserveRunning ? <> · <Countdown until={booking.reserveExpiresAt} deadline="reserve" /></> : null}
        </dd>
        {booking.bookingExpiresAt ? (
          <>
            <dt>{t('bookingExpiresAt')}</dt>
            <dd>
              <Time value={booking.bookingExpiresAt} />
              {booking.status === 'Booked' ? <> · <Countdown until={booking.bookingExpiresAt} deadline="booking" /></> : null}
            </dd>
          </>
        ) : null}
        {booking.closedReason ? (
          <>
            <dt>{t('closedReason')}</dt>
            <dd>{booking.closedReason}</dd>
          </>
        ) : null}
      </dl>
    </div>
  );
}
