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
import { OpsTable } from './ops-table';
import { useUrlFilters } from '@/app/_components/use-url-filters';

type StuckInput = Exclude<RouterInputs['ops']['dashboard']['stuckHolds'], void | undefined>;
type StuckRow = RouterOutputs['ops']['dashboard']['stuckHolds']['rows'][number];

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
      <OpsTable
        testId="stuck-holds-table"
        caption={t('caption')}
        rows={stuck.data?.rows}
        rowKey={(r) => r.propertyObjectId}
        rowProps={(r) => ({ 'data-object-id': r.propertyObjectId, className: r.pastGrace ? 'row-alert' : undefined })}
        sort={{ key: sort, dir, onSort: (key, next) => setParams({ sort: key, dir: next }) }}
        loading={stuck.isPending ? to('loading') : undefined}
        empty={{ text: t('empty'), testId: 'stuck-holds-empty' }}
        columns={[
          { key: 'number', sortKey: 'number', header: t('object'), cell: (r) => <><Link href={objectHref(r) ?? '#'} className="strong">{r.number}</Link><div className="muted small">{r.buildingName}</div></> },
          { key: 'project', sortKey: 'project', header: t('project'), cell: (r) => r.projectName },
          { key: 'tenant', sortKey: 'tenant', header: t('tenant'), className: 'small', cell: (r) => r.tenantName ?? <ShortId id={r.tenantId} /> },
          { key: 'status', sortKey: 'status', header: t('status'), cell: (r) => <ObjectStatusBadge status={r.status} /> },
          { key: 'timer', sortKey: 'timer', header: t('timer'), cell: (r) => <Time value={r.timer} /> },
          {
            key: 'overdue', sortKey: 'overdue', header: t('overdueBy'), className: 'num', cell: (r) => (
              <>
                <span className={r.pastGrace ? 'strong text-alert' : undefined}>{duration(r.overdueByMs)}</span>
                <div>{r.pastGrace
                  ? <span className="badge severity-critical small"><span aria-hidden="true">✖ </span>{t('pastGrace')}</span>
                  : <span className="badge severity-info small"><span aria-hidden="true">◷ </span>{t('inGrace')}</span>}</div>
              </>
            ),
          },
          { key: 'holdDeal', header: t('holdDeal'), cell: (r) => <ShortId id={r.holdDealId} href={r.holdDealId ? dealHref(r.holdDealId) : undefined} /> },
          { key: 'booking', header: t('booking'), cell: (r) => (r.holdBooking ? <><Link href={`/bookings/${r.holdBooking.id}`}>{t('timeline')}</Link> <BookingStatusBadge status={r.holdBooking.status} /></> : <span className="muted">—</span>) },
          {
            key: 'crmActive', header: t('crmActive'), cell: (r) => (r.crmActiveBooking
              ? <span>{t('yes')} · <BookingStatusBadge status={r.crmActiveBooking.status} />{r.crmActiveBooking.holdsThisDeal ? null : <div className="small text-alert">{t('otherDeal')}</div>}</span>
              : <span>{t('no')}</span>),
          },
          canAct && {
            key: 'actions', header: <span className="sr-only">{t('actions')}</span>, cell: (r) => (
              <button type="button" className="btn btn-small btn-danger-outline" data-action="release" onClick={() => { release.reset(); setReleasing(r); }}>{t('release')}</button>
            ),
          },
        ]}
      />
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
      <OpsTable
        testId="lost-releases-table"
        caption={t('lostTitle')}
        rows={data?.rows}
        rowKey={(r) => r.id}
        rowProps={(r) => ({ 'data-object-id': r.propertyObjectId })}
        empty={{ text: t('lostEmpty') }}
        columns={[
          { key: 'releasedAt', header: t('releasedAt'), cell: (r) => <Time value={r.releasedAt} seconds /> },
          { key: 'object', header: t('object'), cell: (r) => (r.number ? <Link href={objectHref(r) ?? '#'} className="strong">{r.number}</Link> : <ShortId id={r.propertyObjectId} />) },
          { key: 'project', header: t('project'), cell: (r) => r.projectName ?? '—' },
          { key: 'tenant', header: t('tenant'), className: 'small', cell: (r) => r.tenantName ?? <ShortId id={r.tenantId} /> },
          { key: 'fromStatus', header: t('fromStatus'), cell: (r) => <ObjectStatusBadge status={r.fromStatus} /> },
          { key: 'expiredTimer', header: t('expiredTimer'), cell: (r) => <Time value={r.expiredTimerAt} /> },
          { key: 'overdue', header: t('overdueBy'), className: 'num', cell: (r) => duration(r.overdueByMs) },
          { key: 'holdDeal', header: t('holdDeal'), cell: (r) => <ShortId id={r.holdDealId} href={r.holdDealId ? dealHref(r.holdDealId) : undefined} /> },
          {
            key: 'source', header: t('sourceCol'), className: 'small', cell: (r) => (
              <>
                {t(`sources.${r.statusSource === 'Manual' ? 'Manual' : 'ExpirationJob'}`)}
                {r.runId ? <div className="muted">{t('run')} <ShortId id={r.runId} /></div> : null}
                {r.reason ? <div className="muted" title={r.reason}>{r.reason.length > 40 ? `${r.reason.slice(0, 40)}…` : r.reason}</div> : null}
              </>
            ),
          },
          { key: 'booking', header: t('booking'), cell: (r) => (r.bookingId ? <Link href={`/bookings/${r.bookingId}`} data-testid="release-timeline-link">{t('timeline')}</Link> : <span className="muted">—</span>) },
        ]}
      />
    </section>
  );
}
