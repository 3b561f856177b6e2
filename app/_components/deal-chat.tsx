'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { actionsForState, useInvalidateAll } from './booking-panel';
import { ConfirmDialog } from './confirm-dialog';
import { ErrorNotice } from './error-notice';
import { useLiveEvents } from './live';
import { useCan } from './session';
import { Time } from './time';
import { useTRPC, type RouterOutputs } from './trpc';

type Deal = RouterOutputs['deal']['byId'];
type DealBooking = Deal['bookings'][number];
type Entry = RouterOutputs['messenger']['chat']['entries'][number];
type CardAction = 'confirm' | 'extend';
type ObjectLabel = RouterOutputs['chessboard']['objectLabels'][number];
/** what a card's Confirm / Extend may do; the booking's current state decides which of them show */
const CARD_ACTIONS: CardAction[] = ['confirm', 'extend'];

const MAX_CHARS = 2000;
const CARD_TIME_FIELDS = ['reserveExpiresAt', 'bookingExpiresAt', 'previousBookingExpiresAt', 'deadline', 'paidAt', 'startedAt'] as const;

export function DealPage({ dealId }: { dealId: string }) {
  const t = useTranslations('dealPage');
  const ts = useTranslations('booking');
  const trpc = useTRPC();
  useLiveEvents(null);
  const deal = useQuery(trpc.deal.byId.queryOptions({ dealId }));
  const objectIds = [...new Set((deal.data?.bookings ?? []).map((b) => b.propertyObjectId))];
  const labels = useQuery(trpc.chessboard.objectLabels.queryOptions({ ids: objectIds }, { enabled: objectIds.length > 0, staleTime: 300_000 }));
  const labelOf = new Map((labels.data ?? []).map((l) => [l.id, l]));
  return (
    <section className="page deal-page">
      <nav className="breadcrumbs" aria-label={t('breadcrumbs')}>
        <Link href="/bookings">{t('allBookings')}</Link> / <span className="mono">{dealId.slice(0, 8)}</span>
      </nav>
      <h1 className="page-title">
        {deal.data?.title ?? t('title')} <span className="mono small">{dealId}</span>
      </h1>
      <ErrorNotice error={deal.error} />
      {deal.data ? (
        <div className="booking-layout">
          <div className="card">
            <h2>{t('bookings')}</h2>
            {deal.data.bookings.length === 0 ? <p className="muted">{t('noBookings')}</p> : (
              <ul className="deal-bookings" data-testid="deal-bookings">
                {deal.data.bookings.map((b) => (
                  <li key={b.id} data-booking-id={b.id}>
                    <Link href={`/bookings/${b.id}`}><BookingName booking={b} label={labelOf.get(b.propertyObjectId)} /></Link>{' '}
                    <span>{ts(`status.${b.status}`)}</span>
                    {labelOf.get(b.propertyObjectId) ? <span className="muted small"> · {labelOf.get(b.propertyObjectId)!.projectName}, {labelOf.get(b.propertyObjectId)!.buildingName}</span> : null}
                  </li>
                ))}
              </ul>
            )}
          </div>
          <div className="card deal-chat-card">
            <DealChat dealId={dealId} bookings={deal.data.bookings} labels={labelOf} />
          </div>
        </div>
      ) : null}
    </section>
  );
}

/** A booking as people name it: by its flat ("кв. 3012"); the short id only until the label has loaded. */
function BookingName({ booking, label }: { booking: { id: string }; label: ObjectLabel | undefined }) {
  const t = useTranslations('dealChat');
  return label ? <>{t('flat', { number: label.number })}</> : <span className="mono">{t('booking', { id: booking.id.slice(0, 8) })}</span>;
}

/**
 * The deal's chat: system cards of the booking saga and participants' messages, newest last; live.
 * It opens at the newest entry and follows new ones while the reader is at the bottom. Only the
 * newest card of each booking carries its actions, and they are those of the booking's current
 * state: an older card's date may be out of date, so acting on it would mislead.
 */
export function DealChat({ dealId, bookings, labels }: { dealId: string; bookings: DealBooking[]; labels?: Map<string, ObjectLabel> }) {
  const t = useTranslations('dealChat');
  const trpc = useTRPC();
  const [older, setOlder] = useState<Entry[]>([]);
  const [olderCursor, setOlderCursor] = useState<number | null | undefined>(undefined);
  const chat = useQuery(trpc.messenger.chat.queryOptions({ dealId }, { retry: false }));
  const queryClient = useQueryClient();
  const loadOlder = async () => {
    const before = olderCursor ?? chat.data?.olderCursor;
    if (!before) return;
    const page = await queryClient.fetchQuery(trpc.messenger.chat.queryOptions({ dealId, before }));
    setOlder((o) => [...page.entries, ...o]);
    setOlderCursor(page.olderCursor);
  };
  const notFound = (chat.error as { data?: { code?: string } } | null)?.data?.code === 'NOT_FOUND';
  const cursor = olderCursor === undefined ? chat.data?.olderCursor : olderCursor;
  const entries = [...older, ...(chat.data?.entries ?? []).filter((e) => !older.some((o) => o.id === e.id))];
  const byId = new Map(bookings.map((b) => [b.id, b]));
  const latestCard = new Map<string, number>();
  for (const e of entries) if (e.kind === 'card' && e.bookingId && e.id > (latestCard.get(e.bookingId) ?? 0)) latestCard.set(e.bookingId, e.id);

  const listRef = useRef<HTMLOListElement>(null);
  const atBottom = useRef(true);
  const newestId = chat.data?.entries.at(-1)?.id ?? null;
  // the newest entry in view on open and when one arrives (unless the reader scrolled up to read older ones)
  useLayoutEffect(() => {
    const el = listRef.current;
    if (el && newestId !== null && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [newestId]);
  useEffect(() => {
    const el = listRef.current;
    if (!el) return;
    const onScroll = () => { atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40; };
    el.addEventListener('scroll', onScroll, { passive: true });
    return () => el.removeEventListener('scroll', onScroll);
  }, [chat.isSuccess]);

  return (
    <>
      <h2 id="deal-chat-title">{t('title')}</h2>
      {notFound ? <p className="muted" data-testid="chat-empty">{t('empty')}</p> : <ErrorNotice error={chat.error} />}
      {cursor ? <button type="button" className="btn btn-small" onClick={() => void loadOlder()}>{t('older')}</button> : null}
      <ol ref={listRef} className="chat" tabIndex={0} aria-labelledby="deal-chat-title" aria-live="polite" data-testid="deal-chat">
        {entries.map((e) => (
          <li key={e.id} className={`chat-entry chat-${e.kind}`} data-kind={e.kind} data-card={e.cardType ?? undefined}>
            {e.kind === 'card' ? (
              <SystemCard entry={e} booking={e.bookingId ? byId.get(e.bookingId) : undefined}
                label={e.bookingId ? labels?.get(byId.get(e.bookingId)?.propertyObjectId ?? '') : undefined}
                latest={!!e.bookingId && latestCard.get(e.bookingId) === e.id} />
            ) : <ChatMessage entry={e} />}
          </li>
        ))}
      </ol>
      {chat.data?.canPost ? <MessageBox dealId={dealId} /> : null}
    </>
  );
}

function ChatMessage({ entry }: { entry: Entry }) {
  const tr = useTranslations('roles');
  return (
    <div>
      <div className="chat-meta small muted">
        <span>{entry.authorRole && tr.has(entry.authorRole) ? tr(entry.authorRole) : entry.authorRole}</span> · <Time value={entry.occurredAt} />
      </div>
      {/* plain text: React escapes it; line breaks kept by CSS, never HTML */}
      <p className="chat-text" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{entry.text}</p>
    </div>
  );
}

function SystemCard({ entry, booking, label, latest }: { entry: Entry; booking: DealBooking | undefined; label: ObjectLabel | undefined; latest: boolean }) {
  const t = useTranslations('dealChat');
  const card = (entry.card ?? {}) as Record<string, unknown> & { reason?: string };
  const type = entry.cardType ?? 'booking-created';
  return (
    <div className="chat-system" role="article" aria-label={t(`cards.${type}.title`)}>
      <div className="chat-meta small muted">
        <span aria-hidden="true">⚙ </span>{t('system')} · <Time value={entry.occurredAt} />
        {entry.bookingId ? <> · <Link href={`/bookings/${entry.bookingId}`}><BookingName booking={{ id: entry.bookingId }} label={label} /></Link></> : null}
      </div>
      <p className="chat-card-title"><strong>{t(`cards.${type}.title`)}</strong></p>
      <p className="chat-card-ask">{t(`cards.${type}.ask`)}</p>
      <dl className="chat-card-data small">
        {CARD_TIME_FIELDS.filter((f) => typeof card[f] === 'string').map((f) => (
          <div key={f}><dt>{t(`fields.${f}`)}</dt><dd><Time value={card[f] as string} /></dd></div>
        ))}
        {card.reason ? <div><dt>{t('fields.reason')}</dt><dd>{card.reason}</dd></div> : null}
      </dl>
      {booking && latest ? <CardActions booking={booking} actions={CARD_ACTIONS} /> : null}
    </div>
  );
}

/** The card's Confirm / Extend: the real crm commands, offered while the booking's state and the viewer's role allow them. */
function CardActions({ booking, actions }: { booking: DealBooking; actions: CardAction[] }) {
  const t = useTranslations('booking');
  const tc = useTranslations('dealChat');
  const trpc = useTRPC();
  const can = useCan();
  const invalidate = useInvalidateAll();
  const queryClient = useQueryClient();
  const [active, setActive] = useState<CardAction | null>(null);
  const [key, setKey] = useState(() => `ui:${crypto.randomUUID()}`);
  const done = () => {
    setActive(null);
    void invalidate();
    void queryClient.invalidateQueries(trpc.messenger.pathFilter());
  };
  const mutations = {
    confirm: useMutation(trpc.booking.confirm.mutationOptions({ onSuccess: done })),
    extend: useMutation(trpc.booking.extend.mutationOptions({ onSuccess: done })),
  };
  const byState = actionsForState(booking);
  const allowed = actions.filter((a) => byState[a] && can(`booking.${a}`));
  if (allowed.length === 0) return null;
  const current = active ? mutations[active] : null;
  return (
    <div className="actions" role="group" aria-label={tc('actions')}>
      {allowed.map((a) => (
        <button key={a} type="button" className="btn btn-primary" data-action={a} disabled={Object.values(mutations).some((m) => m.isPending)}
          onClick={() => { mutations[a].reset(); setKey(`ui:${crypto.randomUUID()}`); setActive(a); }}>
          {t(`actions.${a}`)}
        </button>
      ))}
      <ConfirmDialog
        open={active !== null}
        title={active ? t(`confirm.${active}.title`) : ''}
        message={active ? t(`confirm.${active}.message`) : null}
        confirmLabel={active ? t(`actions.${active}`) : ''}
        pending={current?.isPending}
        error={current?.error}
        onConfirm={() => active && mutations[active].mutate({ bookingId: booking.id, expectedVersion: booking.version, idempotencyKey: key })}
        onClose={() => setActive(null)}
      />
    </div>
  );
}

function MessageBox({ dealId }: { dealId: string }) {
  const t = useTranslations('dealChat');
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const post = useMutation(trpc.messenger.post.mutationOptions({
    onSuccess: () => {
      setText('');
      void queryClient.invalidateQueries(trpc.messenger.pathFilter());
    },
  }));
  const trimmed = text.trim();
  const send = () => { if (trimmed && trimmed.length <= MAX_CHARS && !post.isPending) post.mutate({ dealId, text: trimmed }); };
  return (
    <form className="chat-form" onSubmit={(e) => { e.preventDefault(); send(); }}>
      <label htmlFor="chat-text">{t('message')}</label>
      <textarea id="chat-text" rows={3} value={text} maxLength={MAX_CHARS} onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); send(); } }}
        aria-describedby="chat-hint" data-testid="chat-input" />
      <p id="chat-hint" className="small muted">{t('hint', { count: text.length, max: MAX_CHARS })}</p>
      <ErrorNotice error={post.error} />
      <button type="submit" className="btn btn-primary" disabled={!trimmed || post.isPending} data-testid="chat-send">{t('send')}</button>
    </form>
  );
}
