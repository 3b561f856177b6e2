'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useState } from 'react';
import { ErrorNotice } from '@/app/_components/error-notice';
import { Time } from '@/app/_components/time';
import { useTRPC, type RouterOutputs } from '@/app/_components/trpc';
import { useUrlFilters } from '@/app/_components/use-url-filters';
import { PROFILE_ROLES } from '@/server/profile/permissions';
import { ShortId, useOpsAccess } from './common';
import { OpsTable } from './ops-table';

type Reveal = RouterOutputs['profile']['reveals'][number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAGE = 50;

/** Who may open the reveal log (the server checks again). */
export const canReadReveals = (role: string) => (PROFILE_ROLES['profile.reveals'] as readonly string[]).includes(role);

/**
 * The reveal log of buyers' requisites: who opened a full set, when, why and for which booking — ids,
 * names and reasons, never a requisite field. Filters (set, user) live in the URL; a click on a set or a
 * person in the table filters by it. "Older views" pages back by the last row's id.
 */
export function RevealsPage() {
  const t = useTranslations('ops.reveals');
  const tr = useTranslations('roles');
  const trpc = useTRPC();
  const { role } = useOpsAccess();
  const { params, setParams } = useUrlFilters();
  const setId = UUID.test(params.get('set') ?? '') ? params.get('set')! : undefined;
  const actorId = params.get('user') || undefined;
  const [draftSet, setDraftSet] = useState(setId ?? '');
  const [pages, setPages] = useState<number[]>([]);
  const before = pages.at(-1);
  const allowed = canReadReveals(role);
  const q = useQuery(trpc.profile.reveals.queryOptions({ setId, actorId, before, limit: PAGE }, { enabled: allowed, placeholderData: keepPreviousData }));
  const rows = q.data;
  const userIds = [...new Set((rows ?? []).map((r) => r.actorId).filter((id) => UUID.test(id)))];
  const names = useQuery(trpc.auth.userNames.queryOptions({ ids: userIds }, { enabled: userIds.length > 0, staleTime: 300_000 }));
  const nameOf = (id: string) => names.data?.[id] ?? id.slice(0, 8);
  const filter = (patch: Record<string, string | null>) => { setPages([]); setParams(patch); };

  if (!allowed) return <p className="notice notice-warning" role="alert" data-testid="reveals-no-access">{t('noAccess')}</p>;
  return (
    <div className="ops-page">
      <div className="ops-head">
        <h2>{t('title')}</h2>
      </div>
      <p className="small muted">{t('intro')}</p>
      <form
        className="ops-filters row"
        aria-label={t('filters')}
        onSubmit={(e) => { e.preventDefault(); filter({ set: draftSet.trim() || null }); }}
      >
        <label className="field">
          <span>{t('filterSet')}</span>
          <input
            name="set" value={draftSet} onChange={(e) => setDraftSet(e.target.value)} className="mono" autoComplete="off"
            pattern="[0-9a-fA-F\-]{36}" title={t('setHint')} spellCheck={false}
          />
        </label>
        {actorId ? (
          <span className="chip" data-testid="reveals-user-filter">
            {t('filterUser')}: {nameOf(actorId)}{' '}
            <button type="button" className="btn btn-small" onClick={() => filter({ user: null })} aria-label={t('clearUser')}>✕</button>
          </span>
        ) : null}
        <button type="submit" className="btn" data-action="apply-reveal-filters">{t('apply')}</button>
        {setId || actorId ? (
          <button type="button" className="btn" onClick={() => { setDraftSet(''); filter({ set: null, user: null }); }}>{t('reset')}</button>
        ) : null}
      </form>
      <ErrorNotice error={q.error ?? names.error} />
      <OpsTable<Reveal>
        testId="reveals-table"
        caption={t('caption')}
        rows={rows}
        rowKey={(r) => r.id}
        rowProps={(r) => ({ 'data-reveal-id': r.id })}
        empty={{ text: t('empty') }}
        columns={[
          { key: 'at', header: t('at'), cell: (r) => <Time value={r.at} seconds /> },
          {
            key: 'user', header: t('user'), cellProps: () => ({ 'data-testid': 'reveal-user' }),
            cell: (r) => (
              <button type="button" className="link-button" onClick={() => filter({ user: r.actorId })} title={t('byUser')}>{nameOf(r.actorId)}</button>
            ),
          },
          { key: 'role', header: t('role'), className: 'small', cell: (r) => (tr.has(r.actorRole) ? tr(r.actorRole) : r.actorRole) },
          {
            key: 'set', header: t('set'), cellProps: () => ({ 'data-testid': 'reveal-set' }),
            cell: (r) => (
              <button type="button" className="link-button mono" title={r.setId} onClick={() => { setDraftSet(r.setId); filter({ set: r.setId }); }}>{r.setId.slice(0, 8)}</button>
            ),
          },
          { key: 'version', header: t('version'), headerClassName: 'num', className: 'num', cell: (r) => r.version },
          { key: 'booking', header: t('booking'), cell: (r) => <ShortId id={r.bookingId} href={r.bookingId ? `/bookings/${r.bookingId}` : undefined} /> },
          {
            key: 'reason', header: t('reason'), cellProps: () => ({ 'data-testid': 'reveal-reason' }),
            cell: (r) => (r.reason ? r.reason : <span className="muted small">{t('noReason')}</span>),
          },
        ]}
      />
      <div className="row">
        {pages.length > 0 ? <button type="button" className="btn" onClick={() => setPages(pages.slice(0, -1))}>{t('newer')}</button> : null}
        {rows && rows.length === PAGE ? (
          <button type="button" className="btn" data-action="older-reveals" onClick={() => setPages([...pages, rows.at(-1)!.id])}>{t('more')}</button>
        ) : null}
      </div>
    </div>
  );
}
