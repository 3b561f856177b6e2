'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useLocale, useTranslations } from 'next-intl';
import { useEffect, useId, useRef, useState } from 'react';
import { makeFormat } from './format';
import { useTRPC } from './trpc';

const PAGE = 20;

/**
 * The header's notification centre: a bell with the unread count, a popover list (newest first,
 * mark read / mark all read, each entry links to its booking). Live: the SSE feed's `notifications`
 * event (a NOTIFY on insert) refetches; the stream is its own, so the bell is live on every page.
 */
export function NotificationBell() {
  const t = useTranslations('notifications');
  const format = makeFormat(useLocale());
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [limit, setLimit] = useState(PAGE);
  const panelId = useId();
  const buttonRef = useRef<HTMLButtonElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);

  const count = useQuery(trpc.notifications.unreadCount.queryOptions(undefined, { refetchInterval: 120_000 }));
  // one line per booking: its newest notice, who acted, and how many more there are
  const list = useQuery(trpc.notifications.lines.queryOptions({ limit }, { enabled: open }));
  const actorIds = [...new Set((list.data?.items ?? []).flatMap((n) => (n.data.actorType === 'user' && typeof n.data.actorId === 'string' ? [n.data.actorId] : [])))];
  const names = useQuery(trpc.auth.userNames.queryOptions({ ids: actorIds }, { enabled: open && actorIds.length > 0, staleTime: 300_000 }));
  const refresh = () => queryClient.invalidateQueries(trpc.notifications.pathFilter());
  const markRead = useMutation(trpc.notifications.markRead.mutationOptions({ onSettled: refresh }));
  const markAll = useMutation(trpc.notifications.markAllRead.mutationOptions({ onSettled: refresh }));

  useEffect(() => {
    let source: EventSource | null = null;
    let retry: ReturnType<typeof setTimeout> | null = null;
    let disposed = false;
    let attempts = 0;
    const connect = () => {
      if (disposed) return;
      source = new EventSource('/api/events');
      source.addEventListener('ready', () => { attempts = 0; void refresh(); });
      source.addEventListener('notifications', () => void refresh());
      source.addEventListener('resync', () => void refresh());
      source.onerror = () => {
        if (disposed || source?.readyState !== EventSource.CLOSED) return;
        source.close();
        attempts += 1;
        retry = setTimeout(connect, Math.min(30_000, 1000 * 2 ** Math.min(attempts, 5)));
      };
    };
    connect();
    return () => {
      disposed = true;
      if (retry) clearTimeout(retry);
      source?.close();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- one stream for the bell's lifetime
  }, []);

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') { setOpen(false); buttonRef.current?.focus(); }
    };
    const onClick = (e: MouseEvent) => {
      const target = e.target as Node;
      if (!panelRef.current?.contains(target) && !buttonRef.current?.contains(target)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('mousedown', onClick);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('mousedown', onClick);
    };
  }, [open]);

  const unread = count.data?.unread ?? 0;
  /** "кв. 3012 · Сделка №1019": what the notice is about, as managers name it */
  const subject = (d: Record<string, unknown>) => [
    typeof d.objectNumber === 'string' ? t('flat', { number: d.objectNumber }) : null,
    typeof d.dealTitle === 'string' ? d.dealTitle : null,
  ].filter(Boolean).join(' · ');
  const actorOf = (d: Record<string, unknown>) => (d.actorType === 'user' && typeof d.actorId === 'string' ? names.data?.[d.actorId] ?? null : null);
  const text = (n: { type: string; data: Record<string, unknown> }) => {
    const d = n.data;
    const when = (v: unknown) => (typeof v === 'string' ? format.dateTime(new Date(v)) : '—');
    const deadline = when(d.reserveExpiresAt ?? d.bookingExpiresAt ?? d.deadline);
    return t(`types.${n.type}` as 'types.BookingCreated', {
      deadline, phase: String(d.phase ?? 'Booking'), reason: typeof d.reason === 'string' ? d.reason : '—',
    });
  };

  return (
    <div className="notif">
      <button
        ref={buttonRef} type="button" className="btn btn-small notif-bell" aria-expanded={open} aria-controls={panelId}
        aria-label={t('bell', { count: unread })} data-testid="notification-bell" onClick={() => setOpen((o) => !o)}
      >
        <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false">
          <path fill="currentColor" d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2Z" />
        </svg>
        {unread > 0 ? <span className="notif-count" data-testid="notification-count" aria-hidden="true">{unread > 99 ? '99+' : unread}</span> : null}
      </button>
      {open ? (
        <div ref={panelRef} id={panelId} className="notif-panel" role="region" aria-label={t('title')} data-testid="notification-panel">
          <div className="notif-head">
            <strong>{t('title')}</strong>
            <button type="button" className="btn btn-small" onClick={() => markAll.mutate()} disabled={markAll.isPending || unread === 0} data-testid="notification-mark-all">
              {t('markAllRead')}
            </button>
            <button type="button" className="btn btn-small" onClick={() => { setOpen(false); buttonRef.current?.focus(); }} aria-label={t('close')}>×</button>
          </div>
          {list.data && list.data.items.length === 0 ? <p className="muted notif-empty">{t('empty')}</p> : null}
          <ul className="notif-list">
            {list.data?.items.map((n) => {
              const about = subject(n.data);
              const actor = actorOf(n.data);
              const body = (
                <>
                  {about ? <strong className="notif-subject" data-testid="notification-subject">{about}</strong> : null}
                  <span>{text(n)}</span>
                </>
              );
              return (
                <li key={n.id} className={`notif-item${n.read ? '' : ' notif-unread'}`} data-testid="notification-item" data-read={n.read ? 'true' : 'false'} data-booking-id={n.bookingId ?? undefined}>
                  <span className="notif-dot" aria-hidden="true">{n.read ? '○' : '●'}</span>
                  <div className="notif-body">
                    <Link href={n.bookingId ? `/bookings/${n.bookingId}` : `/deals/${n.dealId}`} className="notif-link"
                      onClick={() => { if (n.unreadIds.length) markRead.mutate({ ids: n.unreadIds }); setOpen(false); }}>
                      {body}
                    </Link>
                    {n.read ? null : <span className="sr-only"> ({t('unread')})</span>}
                    <span className="muted notif-time">
                      {actor ? <span data-testid="notification-actor">{actor} · </span> : null}
                      <time dateTime={new Date(n.occurredAt).toISOString()}>{format.dateTime(new Date(n.occurredAt))}</time>
                      {n.count > 1 ? <span className="notif-repeats" data-testid="notification-repeats"> · <span aria-hidden="true">×{n.count}</span><span className="sr-only">{t('repeats', { count: n.count })}</span></span> : null}
                    </span>
                  </div>
                  {n.read ? null : (
                    <button type="button" className="btn btn-small" onClick={() => markRead.mutate({ ids: n.unreadIds })} data-testid="notification-mark-read">
                      {t('markRead')}
                    </button>
                  )}
                </li>
              );
            })}
          </ul>
          {list.data?.nextCursor ? (
            <button type="button" className="btn btn-small notif-more" onClick={() => setLimit((l) => Math.min(100, l + PAGE))}>{t('more')}</button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
