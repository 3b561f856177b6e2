'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useState } from 'react';
import { Countdown } from './countdown';
import { ErrorNotice } from './error-notice';
import { useLiveEvents } from './live';
import { BOOKING_STATUSES, type BookingStatus } from './status';
import { Time } from './time';
import { useTRPC, type RouterInputs } from './trpc';
import { useUrlFilters, type UrlPatch } from './use-url-filters';

type SortKey = 'createdAt' | 'updatedAt' | 'reserveExpiresAt' | 'bookingExpiresAt' | 'status';
const SORTS: SortKey[] = ['createdAt', 'updatedAt', 'reserveExpiresAt', 'bookingExpiresAt', 'status'];
const EXPIRING = [15, 60, 240, 1440] as const;
const PAGE_SIZE = 25;
/** chessboard's OBJECT_ID_MATCH_LIMIT (server/chessboard/queries.ts), for the truncation notice */
const OBJECT_ID_MATCH_LIMIT = 20_000;
/** what booking.list accepts as a search: a booking / deal id (or its beginning) or an object number */
const SEARCH = /^[^\p{C}]{1,36}$/u;

/** datetime-local value (user's zone) → ISO instant */
const localToIso = (v: string | null) => (v ? new Date(v).toISOString() : undefined);

export function BookingsList() {
  const t = useTranslations('bookings');
  const tb = useTranslations('booking');
  const trpc = useTRPC();
  const { params, setParams: setUrlParams } = useUrlFilters();
  useLiveEvents(null);

  // a new filter or sort starts again at page 1; only the pager keeps the other parameters' page
  const setParams = (patch: UrlPatch, resetPage = true) => setUrlParams(resetPage ? { ...patch, page: null } : patch);

  const statuses = (params.get('status')?.split(',').filter((s): s is BookingStatus => (BOOKING_STATUSES as readonly string[]).includes(s))) ?? [];
  const sort = (SORTS as string[]).includes(params.get('sort') ?? '') ? (params.get('sort') as SortKey) : 'createdAt';
  const direction = params.get('dir') === 'asc' ? 'asc' : 'desc';
  const page = Math.max(1, Number(params.get('page')) || 1);
  const expiring = params.get('expiring');
  const search = params.get('q') ?? '';
  const from = params.get('from');
  const to = params.get('to');
  const projectId = params.get('project');

  // the draft follows the URL when the URL changes (back/forward, a link): adjusted during render, not in an effect
  const [searchDraft, setSearchDraft] = useState(search);
  const [searchInUrl, setSearchInUrl] = useState(search);
  if (search !== searchInUrl) {
    setSearchInUrl(search);
    setSearchDraft(search);
  }
  const searchValid = searchDraft === '' || SEARCH.test(searchDraft.trim());

  const input: RouterInputs['booking']['list'] = {
    status: statuses.length ? statuses : undefined,
    expiringWithinMinutes: expiring ? Number(expiring) : undefined,
    createdFrom: localToIso(from),
    createdTo: localToIso(to),
    search: search && SEARCH.test(search.trim()) ? search.trim() : undefined,
    projectId: projectId ?? undefined,
    sort,
    direction,
    page,
    pageSize: PAGE_SIZE,
  };
  const projects = useQuery(trpc.chessboard.projects.queryOptions());
  const list = useQuery(trpc.booking.list.queryOptions(input, { placeholderData: keepPreviousData }));
  const objectIds = [...new Set(list.data?.items.map((b) => b.propertyObjectId) ?? [])];
  const labels = useQuery(trpc.chessboard.objectLabels.queryOptions({ ids: objectIds }, { enabled: objectIds.length > 0, placeholderData: keepPreviousData }));
  const labelOf = (id: string) => labels.data?.find((l) => l.id === id);
  const pages = list.data ? Math.max(1, Math.ceil(list.data.total / list.data.pageSize)) : 1;

  const sortHeader = (key: SortKey, label: string) => {
    const active = sort === key;
    return (
      <th scope="col" aria-sort={active ? (direction === 'asc' ? 'ascending' : 'descending') : 'none'}>
        <button
          type="button"
          className="sort-button"
          onClick={() => setParams({ sort: key, dir: active && direction === 'desc' ? 'asc' : 'desc' })}
        >
          {label} <span aria-hidden="true">{active ? (direction === 'asc' ? '▲' : '▼') : '↕'}</span>
        </button>
      </th>
    );
  };

  return (
    <section className="page">
      <h1 className="page-title">{t('title')}</h1>
      <form
        className="filter-bar"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          if (searchValid) setParams({ q: searchDraft.trim() });
        }}
      >
        <label className="field-inline">
          <span>{t('search')}</span>
          <input
            value={searchDraft}
            onChange={(e) => setSearchDraft(e.target.value)}
            placeholder={t('searchPlaceholder')}
            aria-invalid={!searchValid}
            className="mono"
            data-testid="bookings-search"
          />
        </label>
        <button type="submit" className="btn btn-small" disabled={!searchValid}>{t('find')}</button>
        <label className="field-inline">
          <span>{t('project')}</span>
          <select value={projectId ?? ''} onChange={(e) => setParams({ project: e.target.value })} data-testid="bookings-project">
            <option value="">{t('allProjects')}</option>
            {projects.data?.map((p) => (
              <option key={p.id} value={p.id}>{p.name}</option>
            ))}
          </select>
        </label>
        <label className="field-inline">
          <span>{t('expiring')}</span>
          <select value={expiring ?? ''} onChange={(e) => setParams({ expiring: e.target.value })}>
            <option value="">{t('any')}</option>
            {EXPIRING.map((m) => (
              <option key={m} value={m}>{t('withinMinutes', { n: m })}</option>
            ))}
          </select>
        </label>
        <label className="field-inline">
          <span>{t('createdFrom')}</span>
          <input type="datetime-local" value={from ?? ''} onChange={(e) => setParams({ from: e.target.value })} />
        </label>
        <label className="field-inline">
          <span>{t('createdTo')}</span>
          <input type="datetime-local" value={to ?? ''} onChange={(e) => setParams({ to: e.target.value })} />
        </label>
      </form>
      {!searchValid ? <p className="notice notice-warning">{t('searchInvalid')}</p> : null}
      {list.data?.objectsTruncated ? <p className="notice notice-warning">{t('objectsTruncated', { n: OBJECT_ID_MATCH_LIMIT })}</p> : null}
      <div className="chips" role="group" aria-label={t('statusFilter')}>
        <span className="filter-label">{t('statusFilter')}</span>
        {BOOKING_STATUSES.map((s) => {
          const on = statuses.includes(s);
          return (
            <button
              key={s}
              type="button"
              className={`chip booking-chip booking-${s}`}
              aria-pressed={on}
              onClick={() => setParams({ status: (on ? statuses.filter((x) => x !== s) : [...statuses, s]).join(',') || null })}
            >
              {tb(`status.${s}`)}
            </button>
          );
        })}
      </div>

      <ErrorNotice error={list.error} />
      <div className="table-wrap" tabIndex={0} aria-busy={list.isFetching}>
        <table className="table" data-testid="bookings-table">
          <caption className="sr-only">{t('caption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('booking')}</th>
              {sortHeader('status', t('status'))}
              <th scope="col">{t('object')}</th>
              <th scope="col">{t('deal')}</th>
              <th scope="col">{t('payment')}</th>
              {sortHeader('createdAt', t('createdAt'))}
              {sortHeader('reserveExpiresAt', t('reserveExpiresAt'))}
              {sortHeader('bookingExpiresAt', t('bookingExpiresAt'))}
              {sortHeader('updatedAt', t('updatedAt'))}
            </tr>
          </thead>
          <tbody>
            {list.data?.items.map((b) => {
              const label = labelOf(b.propertyObjectId);
              return (
                <tr key={b.id}>
                  <td><Link href={`/bookings/${b.id}`} className="mono">{b.id.slice(0, 8)}</Link></td>
                  <td><span className={`badge booking-${b.status}`}>{tb(`status.${b.status}`)}</span></td>
                  <td>
                    {label ? (
                      <Link href={`/chessboard?project=${label.projectId}&building=${label.buildingId}&object=${label.id}`}>
                        {label.number}
                      </Link>
                    ) : labels.isFetching && !labels.data ? <span className="muted" aria-busy="true">…</span> : <span className="mono muted">{b.propertyObjectId.slice(0, 8)}</span>}
                    {label ? <div className="muted small">{label.projectName} · {label.buildingName}</div> : null}
                  </td>
                  <td className="small"><Link href={`/deals/${b.dealId}`} data-testid="deal-link" title={b.dealId}>{b.dealTitle ?? <span className="mono">{b.dealId.slice(0, 8)}</span>}</Link></td>
                  <td className="small">{tb(`paymentStatus.${b.paymentStatus}`)}</td>
                  <td><Time value={b.createdAt} /></td>
                  <td>
                    <Time value={b.reserveExpiresAt} />
                    {b.status === 'Reserved' || b.status === 'AwaitingPayment' ? <div className="small"><Countdown until={b.reserveExpiresAt} deadline="reserve" /></div> : null}
                  </td>
                  <td>
                    <Time value={b.bookingExpiresAt} />
                    {b.status === 'Booked' && b.bookingExpiresAt ? <div className="small"><Countdown until={b.bookingExpiresAt} deadline="booking" /></div> : null}
                  </td>
                  <td><Time value={b.updatedAt} /></td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {list.isPending ? <p className="muted">{t('loading')}</p> : null}
        {list.data && list.data.items.length === 0 ? <p className="empty-state">{t('empty')}</p> : null}
      </div>
      <nav className="pager" aria-label={t('pagination')}>
        <button type="button" className="btn btn-small" disabled={page <= 1} onClick={() => setParams({ page: String(page - 1) }, false)}>
          {t('prev')}
        </button>
        <span>{t('pageOf', { page, pages, total: list.data?.total ?? 0 })}</span>
        <button type="button" className="btn btn-small" disabled={page >= pages} onClick={() => setParams({ page: String(page + 1) }, false)}>
          {t('next')}
        </button>
      </nav>
    </section>
  );
}
