'use client';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useLocale, useTranslations } from 'next-intl';
import { useState } from 'react';
import { ConfirmDialog } from '@/app/_components/confirm-dialog';
import { ErrorNotice } from '@/app/_components/error-notice';
import { useFormat } from '@/app/_components/format';
import { scheduleWords } from '@/app/_components/schedule-words';
import { Time } from '@/app/_components/time';
import { useTRPC, type RouterOutputs } from '@/app/_components/trpc';
import { BarsAndLine } from './charts';
import { LIVE, RunStatusBadge, ShortId, useDuration, useInvalidateOps, useOpsAccess } from './common';
import { OpsTable } from './ops-table';
import { useUrlFilters } from '@/app/_components/use-url-filters';

type JobRow = RouterOutputs['ops']['dashboard']['jobs'][number];
type JobName = JobRow['name'];
type RunRow = RouterOutputs['ops']['dashboard']['jobRuns'][number];
const STATUSES = ['succeeded', 'failed', 'skipped'] as const;

/** datetime-local value (user's zone) → Date */
const fromLocal = (v: string | null) => (v ? new Date(v) : undefined);

/**
 * The summary counters of a run, as "label: value" with the label from the console glossary
 * (messages `glossary.counters`; an unknown key is shown as it is). Booleans read yes / no.
 */
export function SummaryCounters({ summary }: { summary: Record<string, unknown> }) {
  const g = useTranslations('glossary');
  const entries = Object.entries(summary).filter(([k, v]) => k !== 'AsOf' && k !== 'Cutoff' && (typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length < 40)));
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <span className="ops-counters">
      {entries.map(([k, v]) => (
        <span key={k} className="ops-counter" data-counter={k}>
          <span className="muted">{g.has(`counters.${k}`) ? g(`counters.${k}`) : k}</span>{' '}
          <span className="mono">{typeof v === 'boolean' ? g(v ? 'terms.yes' : 'terms.no') : String(v)}</span>
        </span>
      ))}
    </span>
  );
}

/** "Run now" and pause/resume of one job, with their confirmation dialogs (ops only). */
export function JobActions({ job, paused, compact = false }: { job: JobName; paused: boolean; compact?: boolean }) {
  const t = useTranslations('ops.jobs');
  const trpc = useTRPC();
  const invalidate = useInvalidateOps();
  const { canAct } = useOpsAccess();
  const [dialog, setDialog] = useState<'run' | 'pause' | 'resume' | null>(null);
  const [result, setResult] = useState<RouterOutputs['ops']['dashboard']['runJobNow'] | null>(null);
  const done = () => { setDialog(null); void invalidate(); };
  const run = useMutation(trpc.ops.dashboard.runJobNow.mutationOptions({ onSuccess: (r) => { setResult(r); done(); } }));
  const pause = useMutation(trpc.ops.dashboard.pauseJob.mutationOptions({ onSuccess: done }));
  const resume = useMutation(trpc.ops.dashboard.resumeJob.mutationOptions({ onSuccess: done }));
  if (!canAct) return null;
  const cls = `btn ${compact ? 'btn-small' : ''}`;
  return (
    <span className="actions-inline">
      <button type="button" className={`${cls} btn-primary`} data-action="run-now" data-job={job} onClick={() => { run.reset(); setResult(null); setDialog('run'); }} disabled={run.isPending}>
        {run.isPending ? t('running') : t('runNow')}
      </button>
      {paused
        ? <button type="button" className={cls} data-action="resume" data-job={job} onClick={() => { resume.reset(); setDialog('resume'); }}>{t('resume')}</button>
        : <button type="button" className={cls} data-action="pause" data-job={job} onClick={() => { pause.reset(); setDialog('pause'); }}>{t('pause')}</button>}
      {result ? (
        <span className="small" role="status" data-testid={`run-result-${job}`}>
          <RunStatusBadge status={result.status} /> {result.error ? <span className="text-alert">{result.error}</span> : null}
        </span>
      ) : null}
      <ConfirmDialog
        open={dialog === 'run'}
        title={t('runTitle', { job })}
        message={t('runMessage')}
        confirmLabel={t('runNow')}
        fields={[{ name: 'reason', label: t('reasonOptional') }]}
        pending={run.isPending}
        error={run.error}
        onConfirm={(v) => run.mutate({ job, reason: v.reason?.trim() || undefined })}
        onClose={() => setDialog(null)}
      />
      <ConfirmDialog
        open={dialog === 'pause'}
        title={t('pauseTitle', { job })}
        message={t('pauseMessage')}
        confirmLabel={t('pause')}
        danger
        fields={[{ name: 'reason', label: t('reason'), required: true, multiline: true }]}
        pending={pause.isPending}
        error={pause.error}
        onConfirm={(v) => pause.mutate({ job, reason: v.reason.trim() })}
        onClose={() => setDialog(null)}
      />
      <ConfirmDialog
        open={dialog === 'resume'}
        title={t('resumeTitle', { job })}
        message={t('resumeMessage')}
        confirmLabel={t('resume')}
        fields={[{ name: 'reason', label: t('reasonOptional') }]}
        pending={resume.isPending}
        error={resume.error}
        onConfirm={(v) => resume.mutate({ job, reason: v.reason?.trim() || undefined })}
        onClose={() => setDialog(null)}
      />
    </span>
  );
}

export function JobsPage() {
  const t = useTranslations('ops.jobs');
  const to = useTranslations('ops');
  const trpc = useTRPC();
  const { params, setParams } = useUrlFilters();
  const duration = useDuration();
  const jobs = useQuery(trpc.ops.dashboard.jobs.queryOptions(undefined, LIVE));
  const selected = (jobs.data?.find((j) => j.name === params.get('job'))?.name ?? jobs.data?.[0]?.name) as JobName | undefined;

  return (
    <div className="ops-page">
      <div className="ops-head"><h2>{t('title')}</h2></div>
      <ErrorNotice error={jobs.error} />
      <OpsTable
        testId="jobs-table"
        caption={t('title')}
        rows={jobs.data}
        rowKey={(j) => j.name}
        rowProps={(j) => ({ 'data-job': j.name, 'aria-selected': selected === j.name, className: selected === j.name ? 'row-selected' : undefined })}
        loading={jobs.isPending ? to('loading') : undefined}
        columns={[
          {
            key: 'job', header: t('job'), rowHeader: 'row', cell: (j) => (
              <>
                <button type="button" className="link-button mono" onClick={() => setParams({ job: j.name })} aria-pressed={selected === j.name}>{j.name}</button>
                <div className="muted small ops-job-desc">{t(`describe.${j.name}`)}</div>
              </>
            ),
          },
          { key: 'schedule', header: t('schedule'), cell: (j) => <ScheduleCell cron={j.cron} timezone={j.timezone} /> },
          { key: 'nextRun', header: t('nextRun'), cell: (j) => (j.paused ? <span className="muted">{t('pausedNoRun')}</span> : <Time value={j.nextRunAt} seconds />) },
          {
            key: 'state', header: t('state'), cell: (j) => (
              <>
                {j.paused
                  ? <span className="badge run-paused" title={j.control?.reason ?? undefined}><span aria-hidden="true">‖ </span>{t('paused')}</span>
                  : <span className="badge run-active"><span aria-hidden="true">▶ </span>{t('active')}</span>}
                {j.paused && j.control ? <div className="muted small">{j.control.changedByName ?? j.control.changedBy}{j.control.reason ? `: ${j.control.reason}` : ''}</div> : null}
              </>
            ),
          },
          {
            key: 'lastRun', header: t('lastRun'), cell: (j) => (
              <>
                {j.lastRun ? <><RunStatusBadge status={j.lastRun.status} /> <Time value={j.lastRun.startedAt} seconds /><div className="muted small">{t(`trigger.${j.lastRun.trigger}`)}</div></> : <span className="muted">{t('never')}</span>}
                {j.lastRun?.error ? <div className="small text-alert" title={j.lastRun.error}>{j.lastRun.error.slice(0, 80)}</div> : null}
              </>
            ),
          },
          { key: 'duration', header: t('duration'), className: 'num', cell: (j) => duration(j.lastRun?.durationMs) },
          { key: 'summary', header: t('summary'), className: 'small', cell: (j) => (j.lastRun ? <SummaryCounters summary={j.lastRun.summary} /> : null) },
          { key: 'actions', header: <span className="sr-only">{t('actions')}</span>, cell: (j) => <JobActions job={j.name} paused={j.paused} compact /> },
        ]}
      />
      {selected ? <JobHistory job={selected} params={params} setParams={setParams} /> : null}
    </div>
  );
}

function JobHistory({ job, params, setParams }: { job: JobName; params: URLSearchParams; setParams: (p: Record<string, string | null>) => void }) {
  const t = useTranslations('ops.jobs');
  const trpc = useTRPC();
  const f = useFormat();
  const duration = useDuration();
  const statuses = (params.get('status')?.split(',').filter((s): s is (typeof STATUSES)[number] => (STATUSES as readonly string[]).includes(s))) ?? [];
  const from = params.get('from');
  const to = params.get('to');
  const runs = useQuery(trpc.ops.dashboard.jobRuns.queryOptions(
    { job, statuses: statuses.length ? statuses : undefined, from: fromLocal(from), to: fromLocal(to), limit: 200 },
    { ...LIVE, placeholderData: keepPreviousData },
  ));
  const rows = runs.data ?? [];
  return (
    <section className="ops-section" aria-labelledby="job-history-title" data-testid="job-history">
      <div className="ops-head"><h2 id="job-history-title">{t('historyOf', { job })}</h2></div>
      <div className="filter-bar">
        <span className="chips" role="group" aria-label={t('status')}>
          <span className="filter-label">{t('status')}</span>
          {STATUSES.map((s) => {
            const on = statuses.includes(s);
            return <button key={s} type="button" className="chip" aria-pressed={on} onClick={() => setParams({ status: (on ? statuses.filter((x) => x !== s) : [...statuses, s]).join(',') || null })}><RunStatusBadge status={s} /></button>;
          })}
        </span>
        <label className="field-inline"><span>{t('from')}</span><input type="datetime-local" value={from ?? ''} onChange={(e) => setParams({ from: e.target.value })} /></label>
        <label className="field-inline"><span>{t('to')}</span><input type="datetime-local" value={to ?? ''} onChange={(e) => setParams({ to: e.target.value })} /></label>
      </div>
      <ErrorNotice error={runs.error} />
      {rows.length > 1 ? (
        <BarsAndLine
          points={rows.map((r) => ({ at: r.startedAt, bar: r.items, line: r.durationMs }))}
          bars={{ label: t('items') }}
          line={{ label: t('duration') }}
          label={t('chartLabel', { job })}
          timeFormat={(d) => f.dateTimeSeconds(d)}
          lineFormat={(v) => duration(v)}
        />
      ) : null}
      <OpsTable
        testId="job-runs-table"
        caption={t('historyOf', { job })}
        rows={runs.data ? rows : undefined}
        rowKey={(r) => r.id}
        rowProps={(r) => ({ 'data-run-id': r.runId })}
        empty={{ text: t('noRuns') }}
        columns={[
          { key: 'started', header: t('started'), cell: (r: RunRow) => <Time value={r.startedAt} seconds /> },
          { key: 'trigger', header: t('trigger.label'), className: 'small', cell: (r) => t(`trigger.${r.trigger}`) },
          { key: 'status', header: t('status'), cell: (r) => <RunStatusBadge status={r.status} /> },
          { key: 'duration', header: t('duration'), className: 'num', cell: (r) => duration(r.durationMs) },
          { key: 'items', header: t('items'), className: 'num', cell: (r) => r.items ?? '—' },
          { key: 'summary', header: t('summary'), className: 'small', cell: (r) => <SummaryCounters summary={r.summary} /> },
          { key: 'error', header: t('error'), className: 'small text-alert', cell: (r) => r.error },
          { key: 'runId', header: t('runId'), cell: (r) => <ShortId id={r.runId} /> },
        ]}
      />
    </section>
  );
}

/** The schedule in words, daily times in one zone ("ежедневно в 06:45 МСК"); the raw cron and the job's own zone under it. */
function ScheduleCell({ cron, timezone }: { cron: string; timezone: string }) {
  const locale = useLocale();
  const words = scheduleWords(cron, timezone, locale === 'en' ? 'en' : 'ru');
  return words
    ? <><span data-testid="schedule-words">{words}</span><div className="muted small mono">{cron} · {timezone}</div></>
    : <><span className="mono">{cron}</span><div className="muted small">{timezone}</div></>;
}
