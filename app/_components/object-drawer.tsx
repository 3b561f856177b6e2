'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useEffect, useId, useRef, useState } from 'react';
import { BookingActions, BookingSummary, LapseWarning, useInvalidateAll } from './booking-panel';
import { CatalogActions, RoleNote } from './catalog-actions';
import { ConfirmDialog } from './confirm-dialog';
import { Countdown } from './countdown';
import { ErrorNotice } from './error-notice';
import { RequisitesPicker } from './requisites';
import { useFormat } from './format';
import { useCan } from './session';
import { ACTIVE_BOOKING_STATUSES, STATUS_GLYPH } from './status';
import { DealPicker } from './deal-picker';
import { historyHeadline, historyNote, type HistoryNote } from './history-words';
import { Time } from './time';
import { announce } from './toast';
import { useTRPC, type RouterOutputs } from './trpc';

type ObjectDetails = RouterOutputs['chessboard']['object'];
type BookingDetails = RouterOutputs['booking']['byId'];

export function ObjectDrawer({ objectId, onClose }: { objectId: string; onClose: () => void }) {
  const t = useTranslations('drawer');
  const ts = useTranslations('status');
  const trpc = useTRPC();
  const f = useFormat();
  const headingId = useId();
  const headingRef = useRef<HTMLHeadingElement>(null);

  const object = useQuery(trpc.chessboard.object.queryOptions({ propertyObjectId: objectId }));
  const bookings = useQuery(trpc.booking.list.queryOptions({ propertyObjectId: objectId, pageSize: 5, sort: 'createdAt', direction: 'desc' }));
  const activeBooking = bookings.data?.items.find((b) => ACTIVE_BOOKING_STATUSES.includes(b.status)) ?? null;
  const details = useQuery(trpc.booking.byId.queryOptions({ bookingId: activeBooking?.id ?? '' }, { enabled: !!activeBooking }));

  const drawerRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    headingRef.current?.focus();
  }, [objectId]);
  // Esc closes the drawer wherever focus is (not only inside it), unless a confirm dialog is open:
  // that one closes first (the native <dialog> handles its own Esc)
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented || document.querySelector('dialog[open]')) return;
      onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);

  const o = object.data?.object;
  return (
    // a div, not <aside>: role=dialog is not allowed on <aside> (axe aria-allowed-role)
    <div
      ref={drawerRef}
      className="drawer"
      role="dialog"
      aria-modal="true"
      aria-labelledby={headingId}
      data-testid="object-drawer"
      onKeyDown={(e) => {
        if (e.key === 'Tab' && !(e.target as HTMLElement).closest('dialog')) trapTab(e, drawerRef.current);
      }}
    >
      <div className="drawer-head">
        <h2 id={headingId} ref={headingRef} tabIndex={-1}>
          {o ? t('title', { number: o.number }) : t('loading')}
        </h2>
        <button type="button" className="btn btn-small" onClick={onClose} aria-label={t('close')}>
          ✕
        </button>
      </div>
      {object.isPending ? <p className="muted">{t('loading')}</p> : null}
      <ErrorNotice error={object.error} />
      {o ? (
        <div className="drawer-body">
          <section aria-label={t('details')}>
            <p className="muted small">
              {o.projectName} · {o.buildingName}
            </p>
            <p>
              <span className={`badge status-badge status-${o.status}`} data-testid="object-status">
                <span aria-hidden="true">{STATUS_GLYPH[o.status]} </span>
                {ts(o.status)}
              </span>{' '}
              {o.status === 'Reserved' && o.reservedUntil ? <Countdown until={o.reservedUntil} deadline="reserve" /> : null}
              {o.status === 'Booked' && o.bookedUntil ? <Countdown until={o.bookedUntil} deadline="booking" /> : null}
            </p>
            <dl className="kv">
              <dt>{t('floor')}</dt>
              <dd>{o.floor}</dd>
              <dt>{t('section')}</dt>
              <dd>{o.section}</dd>
              <dt>{t('rooms')}</dt>
              <dd>{o.rooms === 0 ? t('studio') : o.rooms}</dd>
              <dt>{t('area')}</dt>
              <dd>{f.area(o.area)} {t('m2')}</dd>
              <dt>{t('price')}</dt>
              <dd>{f.money(o.price)}</dd>
              <dt>{t('pricePerM2')}</dt>
              <dd>{f.money(Math.round(o.price / o.area))}</dd>
              <dt>{t('statusSource')}</dt>
              <dd data-testid="status-set-by">{t(`source.${o.statusSource}`)}<StatusSetBy history={object.data!.history} status={o.status} /></dd>
              <dt>{t('statusChangedAt')}</dt>
              <dd><Time value={o.statusChangedAt} /></dd>
            </dl>
          </section>

          <RoleNote object={o} />

          <section aria-labelledby={`${headingId}-booking`} className="drawer-section">
            <h3 id={`${headingId}-booking`}>{t('currentBooking')}</h3>
            {bookings.isPending ? <p className="muted">{t('loading')}</p> : null}
            <ErrorNotice error={bookings.error ?? details.error} />
            {activeBooking && o.holdBookingId !== activeBooking.id && new Date(o.statusChangedAt).getTime() > new Date(activeBooking.createdAt).getTime() ? (
              // freed (e.g. released by hand) after the booking began, and the booking kept: the two disagree
              <div className="notice notice-error" role="alert" data-testid="drawer-divergence">
                <p><span aria-hidden="true">⚠ </span><strong>{t('divergedTitle')}</strong> {t('divergedText', { status: ts(o.status) })}</p>
                <p><Link href={`/bookings/${activeBooking.id}`}>{t('divergedOpenBooking')}</Link> · <Link href="/ops/reconciliation">{t('divergedRepair')}</Link></p>
              </div>
            ) : null}
            {activeBooking && details.data ? (
              <>
                <LapseWarning booking={details.data} />
                <BookingSummary booking={details.data} />
                <BookingActions booking={details.data} />
              </>
            ) : null}
            {activeBooking && details.isPending ? <p className="muted">{t('loading')}</p> : null}
            {!bookings.isPending && !activeBooking ? <p className="muted">{t('noActiveBooking')}</p> : null}
            {!bookings.isPending && !activeBooking && o.status === 'Free' ? <CreateBooking object={o} /> : null}
            {(o.status === 'Reserved' || o.status === 'Booked') ? <ReleaseHold object={o} activeBooking={activeBooking ? details.data ?? null : null} /> : null}
            {bookings.data && bookings.data.items.some((b) => b.id !== activeBooking?.id) ? (
              <details className="past-bookings">
                <summary>{t('pastBookings')}</summary>
                <ul className="plain-list">
                  {bookings.data.items.filter((b) => b.id !== activeBooking?.id).map((b) => (
                    <li key={b.id}>
                      <Link href={`/bookings/${b.id}`} className="mono small">{b.id.slice(0, 8)}</Link>{' '}
                      <BookingStatusText status={b.status} /> · <Time value={b.createdAt} />
                    </li>
                  ))}
                </ul>
              </details>
            ) : null}
          </section>

          <CatalogActions object={o} onWithdrawn={onClose} />

          <section aria-labelledby={`${headingId}-history`} className="drawer-section">
            <h3 id={`${headingId}-history`}>{t('history')}</h3>
            <StatusHistory history={object.data!.history} />
          </section>
        </div>
      ) : null}
    </div>
  );
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

/** Tab and Shift+Tab cycle inside the drawer (focus trap): from the last stop to the first and back. */
function trapTab(e: React.KeyboardEvent, root: HTMLElement | null) {
  if (!root) return;
  const stops = [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => !el.closest('dialog') && el.getClientRects().length > 0);
  if (stops.length === 0) return;
  const first = stops[0];
  const last = stops[stops.length - 1];
  const active = document.activeElement;
  if (e.shiftKey && (active === first || !root.contains(active) || active === root.querySelector('h2'))) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && active === last) {
    e.preventDefault();
    first.focus();
  }
}

function BookingStatusText({ status }: { status: string }) {
  const t = useTranslations('booking');
  return <span>{t(`status.${status}`)}</span>;
}

/** Who set the current status by hand: the person of its latest history entry, not just "by hand". */
function StatusSetBy({ history, status }: { history: ObjectDetails['history']; status: string }) {
  const t = useTranslations('drawer');
  const trpc = useTRPC();
  const latest = history[0];
  const actorId = latest && latest.toStatus === status ? latest.actorId : null;
  const names = useQuery(trpc.auth.userNames.queryOptions({ ids: actorId ? [actorId] : [] }, { enabled: !!actorId, staleTime: 300_000 }));
  if (!actorId) return null;
  return <> · {names.data?.[actorId] ?? (names.isPending ? '…' : t('actorUnknown'))}</>;
}

function StatusHistory({ history }: { history: ObjectDetails['history'] }) {
  const t = useTranslations('drawer');
  const ts = useTranslations('status');
  const trpc = useTRPC();
  const actorIds = [...new Set(history.map((h) => h.actorId).filter((id): id is string => !!id && /^[0-9a-f-]{36}$/i.test(id)))];
  const names = useQuery(trpc.auth.userNames.queryOptions({ ids: actorIds }, { enabled: actorIds.length > 0, staleTime: 300_000 }));
  if (history.length === 0) return <p className="muted">{t('noHistory')}</p>;
  const statusName = (s: string) => (ts.has(s) ? ts(s) : s);
  const headline = (h: ObjectDetails['history'][number]) => {
    const kind = historyHeadline(h.fromStatus, h.toStatus, historyNote(h.reason));
    return kind === 'extended' ? t('historyWords.extended', { status: statusName(h.toStatus) }) : `${statusName(h.fromStatus)} → ${statusName(h.toStatus)}`;
  };
  return (
    <ol className="history" data-testid="status-history">
      {history.map((h) => (
        <li key={h.id}>
          <div>
            <strong>{headline(h)}</strong>{' '}
            <span className="muted small">{t(`source.${h.statusSource}`)}</span>
          </div>
          <div className="small">
            <Time value={h.at} />
            {h.actorId ? <> · {names.data?.[h.actorId] ?? (names.isPending ? '…' : t('actorUnknown'))}</> : null}
            {h.bookingId ? (
              <>
                {' · '}
                <Link href={`/bookings/${h.bookingId}`} className="mono">{t('bookingLink', { id: h.bookingId.slice(0, 8) })}</Link>
              </>
            ) : null}
          </div>
          <HistoryNoteText note={historyNote(h.reason)} />
        </li>
      ))}
    </ol>
  );
}

function HistoryNoteText({ note }: { note: HistoryNote }) {
  const t = useTranslations('drawer.historyWords');
  if (note.kind === 'none') return null;
  const text =
    note.kind === 'event' ? (note.takeOver ? t('takeOver') : t(`event.${note.event}`))
    : note.kind === 'expired' ? t(`expired.${note.timer}`)
    : note.text;
  return <div className={`small${note.kind === 'text' ? '' : ' muted'}`} data-note={note.kind}>{text}</div>;
}

function CreateBooking({ object }: { object: ObjectDetails['object'] }) {
  const t = useTranslations('drawer');
  const tb = useTranslations('booking');
  const trpc = useTRPC();
  const can = useCan();
  const invalidate = useInvalidateAll();
  const [dealId, setDealId] = useState('');
  const [dealTitle, setDealTitle] = useState('');
  const [programId, setProgramId] = useState('');
  const [requisites, setRequisites] = useState<{ setId: string; version: number } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [idempotencyKey, setIdempotencyKey] = useState(() => `ui:${crypto.randomUUID()}`);
  const enabled = can('booking.create');
  const programs = useQuery(trpc.booking.programs.queryOptions({ tenantId: object.tenantId }, { enabled }));
  // created: the form does not come back while the drawer refetches (the booking list still says "none"
  // for a moment); the notice says what happened until the booking itself replaces this section
  const [created, setCreated] = useState(false);
  const create = useMutation(trpc.booking.create.mutationOptions({
    onSuccess: () => {
      setConfirming(false);
      setCreated(true);
      announce(t('createdShort', { number: object.number }));
      void invalidate();
    },
  }));
  if (!enabled) return null;
  if (created) {
    return <p className="notice notice-success" role="status" data-testid="create-done"><span aria-hidden="true">✓ </span>{t('created', { number: object.number, deal: dealTitle })}</p>;
  }
  const program = programs.data?.find((p) => p.id === programId);
  return (
    <>
    <form
      className="form create-booking"
      aria-label={t('createBooking')}
      onSubmit={(e) => {
        e.preventDefault();
        if (!dealId || !programId) return;
        create.reset();
        setIdempotencyKey(`ui:${crypto.randomUUID()}`);
        setConfirming(true);
      }}
    >
      <h4>{t('createBooking')}</h4>
      <DealPicker tenantId={object.tenantId} value={dealId} onChange={(d) => { setDealId(d?.id ?? ''); setDealTitle(d?.title ?? ''); }} enabled={enabled} />
      <label className="field">
        <span>{t('program')}</span>
        <select name="programId" value={programId} onChange={(e) => setProgramId(e.target.value)} required>
          <option value="">{programs.isPending ? t('loading') : t('pickProgram')}</option>
          {programs.data?.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name} · {p.isPaid ? tb('paid') : tb('free')} · {t('programTerms', { minutes: p.reserveDurationMinutes, hours: p.bookingDurationHours })}
            </option>
          ))}
        </select>
      </label>
      <RequisitesPicker tenantId={object.tenantId} value={requisites} onChange={setRequisites} />
      <ErrorNotice error={programs.error} />
      <button type="submit" className="btn btn-primary" disabled={!dealId || !programId} data-action="create">
        {tb('actions.create')}
      </button>
    </form>
      {/* outside the form: a <form> inside a <form> is invalid and would submit both */}
      <ConfirmDialog
        open={confirming}
        title={tb('confirm.create.title')}
        message={tb('confirm.create.message', { number: object.number, deal: dealTitle, program: program?.name ?? '' })}
        confirmLabel={tb('actions.create')}
        pending={create.isPending}
        error={create.error}
        onConfirm={() => create.mutate({ dealId, programId, propertyObjectId: object.id, idempotencyKey, requisites: requisites ?? undefined })}
        onClose={() => setConfirming(false)}
      />
    </>
  );
}

/**
 * Ops/PIN manager: release a stuck hold by hand (reason required). When CRM still has an active booking
 * of the object the dialog says so in plain words — which booking, until when — and asks what happens
 * to it: cancel it too (crm's cancel, with its events), or release the chessboard only (a recorded
 * divergence that reconciliation lists). The server refuses a release without that choice.
 */
function ReleaseHold({ object, activeBooking }: { object: ObjectDetails['object']; activeBooking: BookingDetails | null }) {
  const t = useTranslations('drawer');
  const tb = useTranslations('booking');
  const trpc = useTRPC();
  const can = useCan();
  const f = useFormat();
  const invalidate = useInvalidateAll();
  const [open, setOpen] = useState(false);
  const release = useMutation(trpc.chessboard.releaseHold.mutationOptions({
    onSuccess: () => {
      setOpen(false);
      void invalidate();
    },
  }));
  if (!can('chessboard.releaseHold')) return null;
  const deadline = activeBooking ? (activeBooking.status === 'Booked' && activeBooking.bookingExpiresAt ? activeBooking.bookingExpiresAt : activeBooking.reserveExpiresAt) : null;
  const message = (
    <>
      <p>{t('releaseHoldMessage', { number: object.number })}</p>
      {activeBooking && deadline ? (
        <p className="notice notice-warning" role="alert" data-testid="release-active-booking-warning">
          <span aria-hidden="true">⚠ </span>
          {t('releaseActiveWarning', { booking: activeBooking.id.slice(0, 8), status: tb(`status.${activeBooking.status}`), deadline: f.dateTimeSeconds(deadline) })}
        </p>
      ) : null}
    </>
  );
  return (
    <div className="ops-actions">
      <button type="button" className="btn btn-danger-outline" data-action="releaseHold" onClick={() => { release.reset(); setOpen(true); }}>
        {t('releaseHold')}
      </button>
      <ConfirmDialog
        open={open}
        title={t('releaseHoldTitle')}
        message={message}
        confirmLabel={t('releaseHold')}
        danger
        fields={[
          { name: 'reason', label: t('reason'), required: true, multiline: true },
          ...(activeBooking ? [{
            name: 'crmBooking', label: t('releaseChoice'), required: true,
            options: [{ value: 'cancel_booking', label: t('releaseChoiceCancel') }, { value: 'keep_booking', label: t('releaseChoiceKeep') }],
          }] : []),
        ]}
        pending={release.isPending}
        error={release.error}
        onConfirm={(v) => release.mutate({
          propertyObjectId: object.id, reason: v.reason.trim(),
          crmBooking: v.crmBooking === 'cancel_booking' || v.crmBooking === 'keep_booking' ? v.crmBooking : undefined,
        })}
        onClose={() => setOpen(false)}
      />
    </div>
  );
}
