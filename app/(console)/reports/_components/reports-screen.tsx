'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useLocale, useTranslations } from 'next-intl';
import { useState } from 'react';
import { durationWords } from '@/app/_components/duration-words';
import { ErrorNotice } from '@/app/_components/error-notice';
import { useFormat } from '@/app/_components/format';
import { useSessionUser } from '@/app/_components/session';
import { useTRPC, type RouterOutputs } from '@/app/_components/trpc';
import { useUrlFilters } from '@/app/_components/use-url-filters';
import { BarChart } from './bar-chart';
import { MAX_DAYS, PERIOD_KINDS, periodOf } from './period';

type Report = RouterOutputs['reports']['funnel'];

const REPORT_ROLES = ['developer_manager', 'pin_manager'];

/**
 * /reports: what became of the bookings created in a period — the funnel with its conversions and
 * times, how they ended (sold, expired, cancelled and why), per agent and per project. Figures from
 * crm (reports.funnel); the same bookings line by line as a CSV. Period and filters live in the URL.
 */
export function ReportsScreen() {
  const t = useTranslations('reports');
  const user = useSessionUser();
  if (!REPORT_ROLES.includes(user.role)) {
    return (
      <section className="page reports-page">
        <h1 className="page-title">{t('title')}</h1>
        <p className="notice notice-warning" data-testid="reports-no-access">{t('noAccess')}</p>
      </section>
    );
  }
  return <Reports crossTenant={user.role === 'pin_manager'} />;
}

function Reports({ crossTenant }: { crossTenant: boolean }) {
  const t = useTranslations('reports');
  const f = useFormat();
  const locale = useLocale() === 'en' ? 'en' : 'ru';
  const trpc = useTRPC();
  const { params, setParams } = useUrlFilters();
  // "this week" and "this month" are read against the clock once per page view (not on every render)
  const [now] = useState(() => new Date());
  const period = periodOf({ period: params.get('period'), from: params.get('from'), to: params.get('to') }, now);
  const projectId = params.get('project') || undefined;
  const tenantId = crossTenant ? params.get('tenant') || undefined : undefined;

  const tenants = useQuery(trpc.reports.tenants.queryOptions(undefined, { enabled: crossTenant }));
  const projects = useQuery(trpc.chessboard.projects.queryOptions());
  const projectChoices = (projects.data ?? []).filter((p) => !tenantId || p.tenantId === tenantId);
  const projectName = (id: string | null) => (id ? projects.data?.find((p) => p.id === id)?.name ?? id.slice(0, 8) : t('unknownProject'));

  const input = { from: period.from, to: period.to, projectId, tenantId };
  const report = useQuery(trpc.reports.funnel.queryOptions(input, { enabled: period.error === null, placeholderData: keepPreviousData }));
  const data = period.error === null ? report.data : undefined;

  const csv = new URLSearchParams({ from: period.from.toISOString(), to: period.to.toISOString() });
  if (projectId) csv.set('projectId', projectId);
  if (tenantId) csv.set('tenantId', tenantId);

  const pct = (v: number | null) => (v === null ? '—' : `${f.integer(Math.round(v * 100))} %`);
  const duration = (s: number | null) => (s === null ? '—' : durationWords(s * 1000, locale));

  return (
    <section className="page reports-page">
      <h1 className="page-title">{t('title')}</h1>
      <p className="muted small">{t('lead')}</p>

      <div className="filter-bar" role="group" aria-label={t('filters')}>
        <div className="chips" role="group" aria-label={t('period')}>
          <span className="filter-label">{t('period')}</span>
          {PERIOD_KINDS.map((k) => (
            <button
              key={k}
              type="button"
              className="chip"
              aria-pressed={period.kind === k}
              data-testid={`period-${k}`}
              onClick={() => setParams(k === 'custom'
                ? { period: k, from: period.fromDay, to: period.toDay }
                : { period: k, from: null, to: null })}
            >
              {t(`periods.${k}`)}
            </button>
          ))}
        </div>
        {period.kind === 'custom' ? (
          <>
            <label className="field-inline">
              <span>{t('from')}</span>
              <input type="date" value={period.fromDay} onChange={(e) => setParams({ from: e.target.value })} data-testid="period-from" aria-invalid={period.error !== null} />
            </label>
            <label className="field-inline">
              <span>{t('to')}</span>
              <input type="date" value={period.toDay} onChange={(e) => setParams({ to: e.target.value })} data-testid="period-to" aria-invalid={period.error !== null} />
            </label>
          </>
        ) : (
          <span className="small" data-testid="period-days">{t('days', { from: period.fromDay, to: period.toDay })}</span>
        )}
        {crossTenant ? (
          <label className="field-inline">
            <span>{t('tenant')}</span>
            <select value={tenantId ?? ''} onChange={(e) => setParams({ tenant: e.target.value, project: null })} data-testid="reports-tenant">
              <option value="">{t('allTenants')}</option>
              {tenants.data?.map((x) => <option key={x.id} value={x.id}>{x.name}</option>)}
            </select>
          </label>
        ) : null}
        <label className="field-inline">
          <span>{t('project')}</span>
          <select value={projectId ?? ''} onChange={(e) => setParams({ project: e.target.value })} data-testid="reports-project">
            <option value="">{t('allProjects')}</option>
            {projectChoices.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </label>
        {period.error === null ? (
          <a className="btn btn-small" href={`/api/reports/bookings.csv?${csv.toString()}`} download data-testid="reports-csv">
            {t('downloadCsv')}
          </a>
        ) : null}
      </div>
      {period.error ? <p className="notice notice-warning" role="alert" data-testid="period-error">{t(`periodError.${period.error}`, { max: MAX_DAYS })}</p> : null}
      <ErrorNotice error={report.error} />
      {report.isPending && period.error === null ? <p className="muted">{t('loading')}</p> : null}

      {data ? (
        <div className="report-grid" aria-busy={report.isFetching} data-testid="report">
          <FunnelBlock data={data} pct={pct} duration={duration} />
          <OutcomeBlock data={data} pct={pct} />
          <CancellationsBlock data={data} />
          <AgentsBlock data={data} pct={pct} />
          <ProjectsBlock data={data} pct={pct} projectName={projectName} />
          <SoldShareBlock
            kind="floors"
            pct={pct}
            fillOffset={1}
            rows={data.floors.map((x) => ({ key: x.band ?? 'unknown', label: x.band ? t(`floors.bands.${x.band}`) : t('floors.unknown'), ...x }))}
          />
          <SoldShareBlock
            kind="rooms"
            pct={pct}
            fillOffset={3}
            rows={data.rooms.map((x) => ({ key: x.rooms ?? 'unknown', label: x.rooms ? t(`rooms.buckets.${x.rooms}`) : t('rooms.unknown'), ...x }))}
          />
        </div>
      ) : null}
    </section>
  );
}

type Pct = (v: number | null) => string;

function FunnelBlock({ data, pct, duration }: { data: Report; pct: Pct; duration: (s: number | null) => string }) {
  const t = useTranslations('reports');
  const f = useFormat();
  const steps = [
    { key: 'created', value: data.created, ofPrevious: null, median: null },
    { key: 'confirmed', value: data.confirmed, ofPrevious: data.conversion.confirmedOfCreated, median: data.medianSeconds.createdToConfirmed },
    { key: 'paid', value: data.paid, ofPrevious: data.conversion.paidOfConfirmed, median: data.medianSeconds.confirmedToPaid },
    { key: 'sold', value: data.sold, ofPrevious: data.conversion.soldOfPaid, median: data.medianSeconds.paidToSold },
  ] as const;
  const ofCreated = (v: number) => pct(data.created > 0 ? v / data.created : null);
  return (
    <article className="report-card report-card-wide" aria-labelledby="funnel-title">
      <h2 id="funnel-title">{t('funnel.title')}</h2>
      <BarChart
        testId="funnel-chart"
        title={t('funnel.title')}
        max={data.created}
        data={steps.map((s) => ({ key: s.key, label: t(`funnel.${s.key}`), value: s.value, text: `${f.integer(s.value)} · ${ofCreated(s.value)}` }))}
      />
      <div className="table-wrap" tabIndex={0} role="region" aria-label={t('funnel.table')}>
        <table className="table" data-testid="funnel-table">
          <caption className="sr-only">{t('funnel.table')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('funnel.step')}</th>
              <th scope="col" className="num">{t('funnel.bookings')}</th>
              <th scope="col" className="num">{t('funnel.ofPrevious')}</th>
              <th scope="col" className="num">{t('funnel.ofCreated')}</th>
              <th scope="col">{t('funnel.median')}</th>
            </tr>
          </thead>
          <tbody>
            {steps.map((s) => (
              <tr key={s.key} data-step={s.key}>
                <th scope="row">{t(`funnel.${s.key}`)}</th>
                <td className="num" data-testid={`funnel-${s.key}`}>{f.integer(s.value)}</td>
                <td className="num">{s.key === 'created' ? '' : pct(s.ofPrevious)}</td>
                <td className="num">{ofCreated(s.value)}</td>
                <td>{s.key === 'created' ? '' : duration(s.median)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="muted small">{t('funnel.help')}</p>
    </article>
  );
}

function OutcomeBlock({ data, pct }: { data: Report; pct: Pct }) {
  const t = useTranslations('reports');
  const f = useFormat();
  const rows = [
    { key: 'sold', value: data.sold },
    { key: 'active', value: data.active },
    { key: 'reserveExpired', value: data.expirations.reservePhase },
    { key: 'bookingExpired', value: data.expirations.bookingPhase },
    { key: 'cancelled', value: data.cancelled },
  ] as const;
  const share = (v: number) => pct(data.created > 0 ? v / data.created : null);
  return (
    <article className="report-card" aria-labelledby="outcome-title">
      <h2 id="outcome-title">{t('outcome.title')}</h2>
      <BarChart
        testId="outcome-chart"
        title={t('outcome.title')}
        max={data.created}
        fillOffset={2}
        data={rows.map((r) => ({ key: r.key, label: t(`outcome.${r.key}`), value: r.value, text: `${f.integer(r.value)} · ${share(r.value)}` }))}
      />
      <div className="table-wrap" tabIndex={0} role="region" aria-label={t('outcome.table')}>
        <table className="table" data-testid="outcome-table">
          <caption className="sr-only">{t('outcome.table')}</caption>
          <thead>
            <tr><th scope="col">{t('outcome.outcome')}</th><th scope="col" className="num">{t('funnel.bookings')}</th><th scope="col" className="num">{t('funnel.ofCreated')}</th></tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key}><th scope="row">{t(`outcome.${r.key}`)}</th><td className="num" data-testid={`outcome-${r.key}`}>{f.integer(r.value)}</td><td className="num">{share(r.value)}</td></tr>
            ))}
          </tbody>
        </table>
      </div>
    </article>
  );
}

function CancellationsBlock({ data }: { data: Report }) {
  const t = useTranslations('reports');
  const f = useFormat();
  const { reasons, otherCount, total } = data.cancellations;
  return (
    <article className="report-card" aria-labelledby="cancel-title">
      <h2 id="cancel-title">{t('cancellations.title')}</h2>
      {total === 0 ? <p className="empty-state">{t('cancellations.none')}</p> : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t('cancellations.title')}>
          <table className="table" data-testid="cancellations-table">
            <caption className="sr-only">{t('cancellations.title')}</caption>
            <thead><tr><th scope="col">{t('cancellations.reason')}</th><th scope="col" className="num">{t('funnel.bookings')}</th></tr></thead>
            <tbody>
              {reasons.map((r) => (
                <tr key={r.reason}><td>{r.reason || <span className="muted">{t('cancellations.noReason')}</span>}</td><td className="num">{f.integer(r.count)}</td></tr>
              ))}
              {otherCount > 0 ? <tr><td className="muted">{t('cancellations.other')}</td><td className="num">{f.integer(otherCount)}</td></tr> : null}
            </tbody>
          </table>
        </div>
      )}
    </article>
  );
}

function AgentsBlock({ data, pct }: { data: Report; pct: Pct }) {
  const t = useTranslations('reports');
  const f = useFormat();
  return (
    <article className="report-card report-card-wide" aria-labelledby="agents-title">
      <h2 id="agents-title">{t('agents.title')}</h2>
      {data.agents.length === 0 ? <p className="empty-state">{t('empty')}</p> : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t('agents.title')}>
          <table className="table" data-testid="agents-table">
            <caption className="sr-only">{t('agents.title')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('agents.agent')}</th>
                <th scope="col" className="num">{t('funnel.bookings')}</th>
                <th scope="col" className="num">{t('funnel.confirmed')}</th>
                <th scope="col" className="num">{t('funnel.sold')}</th>
                <th scope="col" className="num">{t('agents.conversion')}</th>
                <th scope="col" className="num">{t('agents.expired')}</th>
                <th scope="col" className="num">{t('outcome.cancelled')}</th>
              </tr>
            </thead>
            <tbody>
              {data.agents.map((a) => (
                <tr key={a.agentId ?? 'none'}>
                  <th scope="row">{a.agentId ? a.name ?? <span className="mono">{a.agentId.slice(0, 8)}</span> : <span className="muted">{t('agents.none')}</span>}</th>
                  <td className="num">{f.integer(a.bookings)}</td>
                  <td className="num">{f.integer(a.confirmed)}</td>
                  <td className="num">{f.integer(a.sold)}</td>
                  <td className="num">{pct(a.conversion)}</td>
                  <td className="num">{f.integer(a.expired)}</td>
                  <td className="num">{f.integer(a.cancelled)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </article>
  );
}

function ProjectsBlock({ data, pct, projectName }: { data: Report; pct: Pct; projectName: (id: string | null) => string }) {
  const t = useTranslations('reports');
  const f = useFormat();
  return (
    <article className="report-card report-card-wide" aria-labelledby="projects-title">
      <h2 id="projects-title">{t('projects.title')}</h2>
      {data.projects.length === 0 ? <p className="empty-state">{t('empty')}</p> : (
        <>
          <BarChart
            testId="projects-chart"
            title={t('projects.title')}
            max={1}
            fillOffset={4}
            data={data.projects.map((p) => ({
              key: p.projectId ?? 'none', label: projectName(p.projectId), value: p.soldShare ?? 0,
              text: `${pct(p.soldShare)} · ${f.integer(p.sold)}/${f.integer(p.bookings)}`,
            }))}
          />
          <div className="table-wrap" tabIndex={0} role="region" aria-label={t('projects.table')}>
            <table className="table" data-testid="projects-table">
              <caption className="sr-only">{t('projects.table')}</caption>
              <thead>
                <tr><th scope="col">{t('project')}</th><th scope="col" className="num">{t('funnel.bookings')}</th><th scope="col" className="num">{t('funnel.sold')}</th><th scope="col" className="num">{t('projects.share')}</th></tr>
              </thead>
              <tbody>
                {data.projects.map((p) => (
                  <tr key={p.projectId ?? 'none'}><th scope="row">{projectName(p.projectId)}</th><td className="num">{f.integer(p.bookings)}</td><td className="num">{f.integer(p.sold)}</td><td className="num">{pct(p.soldShare)}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </article>
  );
}

/** sold share by floor band or by room count: a chart and its table (the same numbers) */
function SoldShareBlock({ kind, rows, pct, fillOffset }: {
  kind: 'floors' | 'rooms';
  rows: Array<{ key: string; label: string; bookings: number; sold: number; soldShare: number | null }>;
  pct: Pct;
  fillOffset: number;
}) {
  const t = useTranslations('reports');
  const f = useFormat();
  return (
    <article className="report-card" aria-labelledby={`${kind}-title`}>
      <h2 id={`${kind}-title`}>{t(`${kind}.title`)}</h2>
      {rows.length === 0 ? <p className="empty-state">{t('empty')}</p> : (
        <>
          <BarChart
            testId={`${kind}-chart`}
            title={t(`${kind}.title`)}
            max={1}
            fillOffset={fillOffset}
            data={rows.map((r) => ({ key: r.key, label: r.label, value: r.soldShare ?? 0, text: `${pct(r.soldShare)} · ${f.integer(r.sold)}/${f.integer(r.bookings)}` }))}
          />
          <div className="table-wrap" tabIndex={0} role="region" aria-label={t(`${kind}.table`)}>
            <table className="table" data-testid={`${kind}-table`}>
              <caption className="sr-only">{t(`${kind}.table`)}</caption>
              <thead>
                <tr>
                  <th scope="col">{t(kind === 'floors' ? 'floors.band' : 'rooms.rooms')}</th>
                  <th scope="col" className="num">{t('funnel.bookings')}</th>
                  <th scope="col" className="num">{t('funnel.sold')}</th>
                  <th scope="col" className="num">{t('projects.share')}</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.key} data-testid={`${kind}-row-${r.key}`}>
                    <th scope="row">{r.label}</th>
                    <td className="num">{f.integer(r.bookings)}</td>
                    <td className="num">{f.integer(r.sold)}</td>
                    <td className="num">{pct(r.soldShare)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </article>
  );
}
