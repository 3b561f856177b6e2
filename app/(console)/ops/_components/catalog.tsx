'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { ErrorNotice } from '@/app/_components/error-notice';
import { useFormat } from '@/app/_components/format';
import { Time } from '@/app/_components/time';
import { useTRPC } from '@/app/_components/trpc';
import { LineChart, SERIES_COLOURS } from './charts';
import { Freshness, LIVE, RunStatusBadge, ShortId, useDuration } from './common';
import { JobActions } from './jobs';
import { OpsTable } from './ops-table';

export function CatalogPage() {
  const t = useTranslations('ops.catalog');
  const to = useTranslations('ops');
  const tj = useTranslations('ops.jobs');
  const trpc = useTRPC();
  const f = useFormat();
  const duration = useDuration();
  const q = useQuery(trpc.ops.dashboard.catalog.queryOptions(undefined, LIVE));
  const jobs = useQuery(trpc.ops.dashboard.jobs.queryOptions(undefined, LIVE));
  const retention = jobs.data?.find((j) => j.name === 'delisted-retention');
  const d = q.data;
  return (
    <div className="ops-page">
      <div className="ops-head">
        <h2>{t('title')}</h2>
        <Freshness asOf={d?.asOf} fetching={q.isFetching} />
        {retention ? <JobActions job="delisted-retention" paused={retention.paused} /> : null}
      </div>
      <ErrorNotice error={q.error} />
      {!d ? <p className="muted">{to('loading')}</p> : (
        <>
          <p className="small muted">
            {t('settings', { period: duration(d.settings.retentionPeriodMs), batch: d.settings.batchSize, batches: d.settings.maxBatchesPerRun, max: duration(d.settings.maxRunDurationMs) })}
            {' · '}{t('cutoff')} <Time value={d.backlog.cutoff} />
            {retention ? <> · {tj('nextRun')} <Time value={retention.nextRunAt} /> ({retention.timezone})</> : null}
          </p>
          <div className="ops-tiles ops-tiles-4">
            <section className="ops-tile" data-testid="catalog-backlog-objects">
              <h3>{t('objects')}</h3>
              <div className="ops-figures">
                <div className="ops-figure ops-figure-emphasis"><span className="ops-figure-value" data-testid="backlog-objects-past">{f.integer(d.backlog.propertyObjects.pastCutoff)}</span><span className="ops-figure-label">{t('pastCutoff')}</span></div>
                <div className="ops-figure"><span className="ops-figure-value" data-testid="backlog-objects-all">{f.integer(d.backlog.propertyObjects.all)}</span><span className="ops-figure-label">{t('allDelisted')}</span></div>
              </div>
              <p className="small muted">{t('oldest')} <Time value={d.backlog.propertyObjects.oldestUpdatedAt} /></p>
            </section>
            <section className="ops-tile" data-testid="catalog-backlog-projects">
              <h3>{t('projects')}</h3>
              <div className="ops-figures">
                <div className="ops-figure ops-figure-emphasis"><span className="ops-figure-value" data-testid="backlog-projects-past">{f.integer(d.backlog.projects.pastCutoff)}</span><span className="ops-figure-label">{t('pastCutoff')}</span></div>
                <div className="ops-figure"><span className="ops-figure-value">{f.integer(d.backlog.projects.all)}</span><span className="ops-figure-label">{t('allDelisted')}</span></div>
              </div>
              <p className="small muted">{t('oldest')} <Time value={d.backlog.projects.oldestUpdatedAt} /></p>
            </section>
            <section className="ops-tile" data-testid="catalog-next-run">
              <h3>{t('nextRunTitle')}</h3>
              <div className="ops-figures">
                <div className="ops-figure ops-figure-emphasis"><span className="ops-figure-value" data-testid="next-run-objects">{f.integer(d.candidates.propertyObjects.count)}</span><span className="ops-figure-label">{t('objectCards', { count: d.candidates.propertyObjects.count })}</span></div>
                <div className="ops-figure"><span className="ops-figure-value">{f.integer(d.candidates.projects.count)}</span><span className="ops-figure-label">{t('projectCards', { count: d.candidates.projects.count })}</span></div>
              </div>
              <p className="small">{t('oldest')} <Time value={d.candidates.propertyObjects.oldestUpdatedAt ?? d.candidates.projects.oldestUpdatedAt} /></p>
              <p className="small muted">
                {t('batches', { n: d.candidates.estimatedBatches })}{' · '}
                {d.candidates.fitsInOneRun ? t('fits') : <span className="text-alert">⚠ {t('doesNotFit')}</span>}
                {d.candidates.projects.waitingForObjectCards > 0 ? <> · {t('waiting', { n: d.candidates.projects.waitingForObjectCards })}</> : null}
              </p>
            </section>
            <section className="ops-tile" data-testid="catalog-contention">
              <h3>{t('contention')}</h3>
              <div className="ops-figures">
                <div className="ops-figure"><span className="ops-figure-value">{f.integer(d.contention.skippedRuns)}</span><span className="ops-figure-label">{t('skippedRuns')}</span></div>
              </div>
              <p className="small muted">{d.contention.lastSkippedAt ? <>{t('lastSkipped')} <Time value={d.contention.lastSkippedAt} /></> : t('noContention')}</p>
            </section>
          </div>
          <section className="ops-section" aria-labelledby="backlog-chart-title">
            <h3 id="backlog-chart-title">{t('chartTitle')}</h3>
            {(d.trends['delisted.all']?.length ?? 0) > 1 ? (
              <LineChart
                label={t('chartTitle')}
                timeFormat={(x) => f.dateTime(x)}
                series={[
                  { key: 'all', label: t('allDelisted'), colour: SERIES_COLOURS.blue, points: d.trends['delisted.all'] ?? [] },
                  { key: 'past', label: t('pastCutoff'), colour: SERIES_COLOURS.vermillion, dashed: true, points: d.trends['delisted.past_cutoff'] ?? [] },
                ]}
              />
            ) : <p className="empty-state small">{t('noHistory')}</p>}
          </section>
          <section className="ops-section" aria-labelledby="retention-runs-title">
            <h3 id="retention-runs-title">{t('runsTitle')}</h3>
            <OpsTable
              testId="retention-runs-table"
              caption={t('runsTitle')}
              rows={d.runs}
              rowKey={(r) => r.runId}
              rowProps={(r) => ({ 'data-run-id': r.runId })}
              empty={{ text: t('noRuns') }}
              columns={[
                { key: 'started', header: t('started'), cell: (r) => <Time value={r.startedAt} seconds /> },
                { key: 'trigger', header: tj('trigger.label'), className: 'small', cell: (r) => tj(`trigger.${r.trigger}`) },
                { key: 'status', header: t('status'), cell: (r) => <><RunStatusBadge status={r.status} />{r.error ? <div className="small text-alert">{r.error}</div> : null}</> },
                { key: 'deletedObjects', header: t('deletedObjects'), headerClassName: 'num', className: 'num', cellProps: () => ({ 'data-testid': 'run-deleted-objects' }), cell: (r) => r.deletedPropertyObjectCards },
                { key: 'deletedProjects', header: t('deletedProjects'), headerClassName: 'num', className: 'num', cellProps: () => ({ 'data-testid': 'run-deleted-projects' }), cell: (r) => r.deletedProjectCards },
                { key: 'deletedOverrides', header: t('deletedOverrides'), headerClassName: 'num', className: 'num', cell: (r) => r.deletedOverrides },
                { key: 'batches', header: t('batchesCol'), headerClassName: 'num', className: 'num', cell: (r) => r.batchesProcessed },
                { key: 'hasMore', header: t('hasMore'), cell: (r) => (r.hasMore ? <span className="text-alert">⚠ {t('yes')}</span> : t('no')) },
                { key: 'duration', header: t('duration'), headerClassName: 'num', className: 'num', cell: (r) => duration(r.durationMs) },
                { key: 'runId', header: t('runId'), cell: (r) => <ShortId id={r.runId} /> },
              ]}
            />
          </section>
        </>
      )}
    </div>
  );
}
