'use client';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useState } from 'react';
import { ConfirmDialog } from '@/app/_components/confirm-dialog';
import { ErrorNotice } from '@/app/_components/error-notice';
import { useFormat } from '@/app/_components/format';
import { Time } from '@/app/_components/time';
import { useTRPC, type RouterInputs, type RouterOutputs } from '@/app/_components/trpc';
import { SERIES_COLOURS, StackedBars } from './charts';
import {
  BookingStatusBadge, dealHref, Freshness, LIVE, objectHref, ObjectStatusBadge, ShortId, useDuration, useInvalidateOps, useOpsAccess,
} from './common';
import { useUrlFilters } from '@/app/_components/use-url-filters';

type StuckInput = Exclude<RouterInputs['ops']['dashboard']['stuckHolds'], void | undefined>;
type StuckRow = RouterOutputs['ops']['dashboard']['stuckHolds']['rows'][number];
type SortKey = 'overdue' | 'number' | 'project' | 'tenant' | 'status' | 'timer';

const RANGES = [24, 24 * 7, 24 * 30] as const;

export function HoldsPage() {
  const t = useTranslations('ops.holds');
  const to = useTranslations('ops');
  const trpc = useTRPC();
  const { params, setParams } = useUrlFilters();
  const duration = useDuration();
  const { canAct } = useOpsAccess();
  const [releasing, setReleasing] = useState<StuckRow | null>(null);
  const invalidate = useInvalidateOps();


  const phase = (['all', 'inGrace', 'pastGrace'] as const).find((p) => p === params.get('phase')) ?? 'all';
  const status = (['Reserved', 'Booked'] as const).find((s) => s === params.get('status'));
  const crmActive = (['yes', 'no'] as const).find((s) => s === params.get('crm'));
  const sort = (['overdue', 'number', 'project', 'tenant', 'status', 'timer'] as const).find((s) => s === params.get('sort')) ?? 'overdue';
  const dir = params.get('dir') === 'asc' ? 'asc' : 'desc';
  const number = params.get('number') ?? '';
  const input: StuckInput = { phase, status, crmActive, sort, dir, number: number || undefined };
  const stuck = useQuery(trpc.ops.dashboard.stuckHolds.queryOptions(input, { ...LIVE, placeholderData: keepPreviousData }));

  const source = (['ExpirationJob', 'Manual', 'all'] as const).find((s) => s === params.get('source')) ?? 'ExpirationJob';
  const rangeHours = RANGES.find((r) => String(r) === params.get('range')) ?? 24 * 7;
  const releases = useQuery(trpc.ops.dashboard.holdReleases.queryOptions({ source, rangeHours }, { ...LIVE, placeholderData: keepPreviousData }));

  const release = useMutation(trpc.ops.dashboard.releaseHold.mutationOptions({
    onSuccess: () => { setReleasing(null); void invalidate(); },
  }));

  const sortHeader = (key: SortKey, label: string) => {
    const active = sort === key;
    return (
      <th scope="col" aria-sort={active ? (dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
        <button type="button" className="sort-button" onClick={() => setParams({ sort: key, dir: active && dir === 'desc' ? 'asc' : 'desc' })}>
          {label} <span aria-hidden="true">{active ? (dir === 'asc' ? '▲' : '▼') : '↕'}</span>
        </button>
      </th>
    );
  };
  const chip = (key: string, value: string | null, current: string | undefined | null, label: string) => (
    <button key={`${key}-${value}`} type="button" className="chip" aria-pressed={(current ?? null) === value} onClick={() => setParams({ [key]: value })}>{label}</button>
  );

  return (
    <div className="ops-page">
      <div className="ops-head">
        <h2>{t('title')}</h2>
        <Freshness asOf={stuck.data?.asOf} fetching={stuck.isFetching} />
      </div>
      <p className="small muted">{t('intro', { grace: duration(stuck.data?.graceMs ?? null) })}</p>
      <div className="filter-bar" role="group" aria-label={t('filters')}>
        <span className="chips" role="group" aria-label={t('phase')}>
          <span className="filter-label">{t('phase')}</span>
          {chip('phase', null, phase === 'all' ? null : phase, t('phaseAll'))}
          {chip('phase', 'pastGrace', phase, t('phasePast'))}
          {chip('phase', 'inGrace', phase, t('phaseIn'))}
        </span>
        <span className="chips" role="group" aria-label={t('status')}>
          <span className="filter-label">{t('status')}</span>
          {chip('status', null, status, t('any'))}
          {chip('status', 'Reserved', status, t('reserved'))}
          {chip('status', 'Booked', status, t('booked'))}
        </span>
        <span className="chips" role="group" aria-label={t('crmActive')}>
          <span className="filter-label">{t('crmActive')}</span>
          {chip('crm', null, crmActive, t('any'))}
          {chip('crm', 'yes', crmActive, t('yes'))}
          {chip('crm', 'no', crmActive, t('no'))}
        </span>
        <label className="field-inline">
          <span>{t('number')}</span>
          <input defaultValue={number} size={8} onChange={(e) => setParams({ number: e.target.value.trim() })} />
        </label>
      </div>
      <ErrorNotice error={stuck.error} />
      <div className="table-wrap" tabIndex={0}>
        <table className="table ops-table" data-testid="stuck-holds-table">
          <caption className="sr-only">{t('caption')}</caption>
          <thead>
            <tr>
              {sortHeader('number', t('object'))}
              {sortHeader('project', t('project'))}
              {sortHeader('tenant', t('tenant'))}
              {sortHeader('status', t('status'))}
              {sortHeader('timer', t('timer'))}
              {sortHeader('overdue', t('overdueBy'))}
              <th scope="col">{t('holdDeal')}</th>
              <th scope="col">{t('booking')}</th>
              <th scope="col">{t('crmActive')}</th>
              {canAct ? <th scope="col"><span className="sr-only">{t('actions')}</span></th> : null}
            </tr>
          </thead>
          <tbody>
            {stuck.data?.rows.map((r) => (
              <tr key={r.propertyObjectId} data-object-id={r.propertyObjectId} className={r.pastGrace ? 'row-alert' : undefined}>
                <td><Link href={objectHref(r) ?? '#'} className="strong">{r.number}</Link><div className="muted small">{r.buildingName}</div></td>
                <td>{r.projectName}</td>
                <td className="small">{r.tenantName ?? <ShortId id={r.tenantId} />}</td>
                <td><ObjectStatusBadge status={r.status} /></td>
                <td><Time value={r.timer} /></td>
                <td className="num">
                  <span className={r.pastGrace ? 'strong text-alert' : undefined}>{duration(r.overdueByMs)}</span>
                  <div>{r.pastGrace
                    ? <span className="badge severity-critical small"><span aria-hidden="true">✖ </span>{t('pastGrace')}</span>
                    : <span className="badge severity-info small"><span aria-hidden="true">◷ </span>{t('inGrace')}</span>}</div>
                </td>
                <td><ShortId id={r.holdDealId} href={r.holdDealId ? dealHref(r.holdDealId) : undefined} /></td>
                <td>{r.holdBooking ? <><Link href={`/bookings/${r.holdBooking.id}`}>{t('timeline')}</Link> <BookingStatusBadge status={r.holdBooking.status} /></> : <span className="muted">—</span>}</td>
                <td>{r.crmActiveBooking
                  ? <span>{t('yes')} · <BookingStatusBadge status={r.crmActiveBooking.status} />{r.crmActiveBooking.holdsThisDeal ? null : <div className="small text-alert">{t('otherDeal')}</div>}</span>
                  : <span>{t('no')}</span>}</td>
                {canAct ? (
                  <td>
                    <button type="button" className="btn btn-small btn-danger-outline" data-action="release" onClick={() => { release.reset(); setReleasing(r); }}>{t('release')}</button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
        {stuck.isPending ? <p className="muted">{to('loading')}</p> : null}
        {stuck.data && stuck.data.rows.length === 0 ? <p className="empty-state" data-testid="stuck-holds-empty">{t('empty')}</p> : null}
      </div>
      <ConfirmDialog
        open={releasing !== null}
        title={t('releaseTitle', { number: releasing?.number ?? '' })}
        message={t('releaseMessage')}
        confirmLabel={t('release')}
        danger
        fields={[{ name: 'reason', label: t('reason'), required: true, multiline: true }]}
        pending={release.isPending}
        error={release.error}
        onConfirm={(v) => releasing && release.mutate({ propertyObjectId: releasing.propertyObjectId, reason: v.reason.trim() })}
        onClose={() => setReleasing(null)}
      />

      <LostReleases data={releases.data} error={releases.error} fetching={releases.isFetching} source={source} rangeHours={rangeHours} setParams={setParams} />
    </div>
  );
}

function LostReleases({ data, error, fetching, source, rangeHours, setParams }: {
  data: RouterOutputs['ops']['dashboard']['holdReleases'] | undefined;
  error: unknown;
  fetching: boolean;
  source: 'ExpirationJob' | 'Manual' | 'all';
  rangeHours: number;
  setParams: (patch: Record<string, string | null>) => void;
}) {
  const t = useTranslations('ops.holds');
  const f = useFormat();
  const duration = useDuration();
  const hourly = rangeHours <= 48;
  const timeFormat = (d: Date) => (hourly ? `${f.time(d).slice(0, 5)}` : f.dateTime(d).replace(/,? \d{1,2}:\d{2}.*$/, ''));
  return (
    <section id="lost-releases" className="ops-section" aria-labelledby="lost-releases-title">
      <div className="ops-head">
        <h2 id="lost-releases-title">{t('lostTitle')}</h2>
        <Freshness asOf={data?.asOf} fetching={fetching} />
      </div>
      <p className="small muted">{t('lostIntro')}</p>
      <div className="filter-bar">
        <span className="chips" role="group" aria-label={t('source')}>
          <span className="filter-label">{t('source')}</span>
          {(['ExpirationJob', 'Manual', 'all'] as const).map((s) => (
            <button key={s} type="button" className="chip" aria-pressed={source === s} onClick={() => setParams({ source: s === 'ExpirationJob' ? null : s })}>{t(`sources.${s}`)}</button>
          ))}
        </span>
        <span className="chips" role="group" aria-label={t('range')}>
          <span className="filter-label">{t('range')}</span>
          {RANGES.map((r) => (
            <button key={r} type="button" className="chip" aria-pressed={rangeHours === r} onClick={() => setParams({ range: r === 24 * 7 ? null : String(r) })}>{t(`ranges.${r}`)}</button>
          ))}
        </span>
      </div>
      <ErrorNotice error={error} />
      {data ? (
        <StackedBars
          rows={data.histogram.map((b) => ({ at: b.at, expirationJob: b.expirationJob, manual: b.manual }))}
          series={[
            { key: 'expirationJob', label: t('sources.ExpirationJob'), colour: SERIES_COLOURS.vermillion },
            { key: 'manual', label: t('sources.Manual'), colour: SERIES_COLOURS.orange, pattern: true },
          ]}
          label={t('chartLabel')}
          timeFormat={timeFormat}
        />
      ) : null}
      <div className="table-wrap" tabIndex={0}>
        <table className="table ops-table" data-testid="lost-releases-table">
          <caption className="sr-only">{t('lostTitle')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('releasedAt')}</th>
              <th scope="col">{t('object')}</th>
              <th scope="col">{t('project')}</th>
              <th scope="col">{t('tenant')}</th>
              <th scope="col">{t('fromStatus')}</th>
              <th scope="col">{t('expiredTimer')}</th>
              <th scope="col">{t('overdueBy')}</th>
              <th scope="col">{t('holdDeal')}</th>
              <th scope="col">{t('sourceCol')}</th>
              <th scope="col">{t('booking')}</th>
            </tr>
          </thead>
          <tbody>
            {data?.rows.map((r) => (
              <tr key={r.id} data-object-id={r.propertyObjectId}>
                <td><Time value={r.releasedAt} seconds /></td>
                <td>{r.number ? <Link href={objectHref(r) ?? '#'} className="strong">{r.number}</Link> : <ShortId id={r.propertyObjectId} />}</td>
                <td>{r.projectName ?? '—'}</td>
                <td className="small">{r.tenantName ?? <ShortId id={r.tenantId} />}</td>
                <td><ObjectStatusBadge status={r.fromStatus} /></td>
                <td><Time value={r.expiredTimerAt} /></td>
                <td className="num">{duration(r.overdueByMs)}</td>
                <td><ShortId id={r.holdDealId} href={r.holdDealId ? dealHref(r.holdDealId) : undefined} /></td>
                <td className="small">
                  {t(`sources.${r.statusSource === 'Manual' ? 'Manual' : 'ExpirationJob'}`)}
                  {r.runId ? <div className="muted">{t('run')} <ShortId id={r.runId} /></div> : null}
                  {r.reason ? <div className="muted" title={r.reason}>{r.reason.length > 40 ? `${r.reason.slice(0, 40)}…` : r.reason}</div> : null}
                </td>
                <td>{r.bookingId ? <Link href={`/bookings/${r.bookingId}`} data-testid="release-timeline-link">{t('timeline')}</Link> : <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {data && data.rows.length === 0 ? <p className="empty-state">{t('lostEmpty')}</p> : null}
      </div>
    </section>
  );
}
