'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { ErrorNotice } from '@/app/_components/error-notice';
import { useFormat } from '@/app/_components/format';
import { Time } from '@/app/_components/time';
import { useTRPC, type RouterOutputs } from '@/app/_components/trpc';
import { SERIES_COLOURS, Sparkline } from './charts';
import { Freshness, LIVE, RunStatusBadge, useDuration } from './common';

type Overview = RouterOutputs['ops']['dashboard']['overview'];
type Alert = Overview['alerts'][number];

const SEVERITY_GLYPH = { critical: '✖', warning: '⚠', info: 'ℹ' } as const;

/** An alert in words: what it means and which runbook action applies. */
export function useAlertText() {
  const t = useTranslations('ops.alerts');
  return (a: Alert) => {
    const values = { ...a.values, subject: a.subject ?? '' } as Record<string, string | number>;
    const never = a.code === 'RETENTION_NOT_RUN' && a.values.hours === -1;
    return {
      title: t(`${a.code}.${never ? 'titleNever' : 'title'}`, values),
      meaning: t(`${a.code}.meaning`, values),
      action: t(`${a.code}.action`, values),
    };
  };
}

export function AlertList({ alerts }: { alerts: Alert[] }) {
  const t = useTranslations('ops');
  const text = useAlertText();
  if (alerts.length === 0) {
    return <p className="ops-all-clear" data-testid="ops-all-clear"><span aria-hidden="true">✓ </span>{t('overview.allClear')}</p>;
  }
  return (
    <ul className="ops-alerts" data-testid="ops-alerts">
      {alerts.map((a, i) => {
        const x = text(a);
        return (
          <li key={`${a.code}-${a.subject ?? i}`} className={`ops-alert ops-alert-${a.severity}`} data-alert={a.code}>
            <span className={`badge severity-${a.severity}`}><span aria-hidden="true">{SEVERITY_GLYPH[a.severity]} </span>{t(`severity.${a.severity}`)}</span>
            <div>
              <strong>{x.title}</strong> <span className="small">— {x.meaning}</span>
              <div className="small"><span className="ops-runbook">{t('overview.runbook')}:</span> {x.action}</div>
            </div>
          </li>
        );
      })}
    </ul>
  );
}

function Tile({ title, href, alerts, children, testId }: { title: string; href: string; alerts: Alert[]; children: React.ReactNode; testId: string }) {
  const t = useTranslations('ops');
  const text = useAlertText();
  const worst = alerts.find((a) => a.severity === 'critical') ?? alerts.find((a) => a.severity === 'warning') ?? alerts[0];
  return (
    <section className={`ops-tile${worst ? ` ops-tile-${worst.severity}` : ''}`} data-testid={testId} aria-labelledby={`${testId}-title`}>
      <header className="ops-tile-head">
        <h2 id={`${testId}-title`}><Link href={href}>{title}</Link></h2>
        {worst
          ? <span className={`badge severity-${worst.severity}`}><span aria-hidden="true">{SEVERITY_GLYPH[worst.severity]} </span>{t(`severity.${worst.severity}`)}</span>
          : <span className="badge severity-ok"><span aria-hidden="true">✓ </span>{t('ok')}</span>}
      </header>
      {children}
      {alerts.filter((a) => a.severity !== 'info').map((a, i) => (
        <p key={i} className="ops-tile-note small">{text(a).title}</p>
      ))}
    </section>
  );
}

function Figure({ value, label, testId, emphasis = false }: { value: number | string; label: string; testId?: string; emphasis?: boolean }) {
  const f = useFormat();
  return (
    <div className={`ops-figure${emphasis ? ' ops-figure-emphasis' : ''}`}>
      <span className="ops-figure-value" data-testid={testId}>{typeof value === 'number' ? f.integer(value) : value}</span>
      <span className="ops-figure-label">{label}</span>
    </div>
  );
}

export function OverviewPage() {
  const t = useTranslations('ops');
  const tt = useTranslations('ops.overview.tiles');
  const trpc = useTRPC();
  const duration = useDuration();
  const q = useQuery(trpc.ops.dashboard.overview.queryOptions(undefined, LIVE));
  const o = q.data;
  const alertsOf = (tile: Alert['tile']) => o?.alerts.filter((a) => a.tile === tile) ?? [];
  const trend = (name: string) => o?.trends[name];

  return (
    <div className="ops-page">
      <div className="ops-head">
        <h2>{t('tabs.overview')}</h2>
        <Freshness asOf={o?.asOf} fetching={q.isFetching} />
        {o?.replication.readFrom === 'replica' ? (
          <span className="muted small" data-testid="ops-read-replica">
            {o.replication.lagSeconds === null
              ? t('overview.readReplicaUnknown')
              : t('overview.readReplica', { lag: duration(o.replication.lagSeconds * 1000) })}
          </span>
        ) : null}
      </div>
      <ErrorNotice error={q.error} />
      {!o ? <p className="muted">{t('loading')}</p> : (
        <>
          <section className="ops-alert-panel" aria-label={t('overview.alertsTitle')}>
            <h3>{t('overview.alertsTitle')}</h3>
            <AlertList alerts={o.alerts} />
          </section>
          <div className="ops-tiles">
            <Tile title={tt('holds.title')} href="/ops/holds" alerts={alertsOf('holds')} testId="tile-holds">
              <div className="ops-figures">
                <Figure value={o.stuckHolds.pastGrace} label={tt('holds.pastGrace')} testId="stuck-past-grace" emphasis />
                <Figure value={o.stuckHolds.inGrace} label={tt('holds.inGrace')} testId="stuck-in-grace" />
              </div>
              <Sparkline points={trend('holds.past_grace')} label={`${tt('holds.title')}, ${tt('holds.pastGrace')} — ${t('trend24h')}`} colour={SERIES_COLOURS.vermillion} />
              <p className="small muted">{tt('holds.hint', { grace: duration(o.stuckHolds.graceMs) })}</p>
              {o.stuckHolds.oldestTimer ? <p className="small">{tt('holds.oldest')} <Time value={o.stuckHolds.oldestTimer} /></p> : null}
            </Tile>

            <Tile title={tt('releases.title')} href="/ops/holds#lost-releases" alerts={alertsOf('releases')} testId="tile-releases">
              <div className="ops-figures">
                <Figure value={o.lostReleases.lastHour} label={tt('releases.hour')} testId="lost-hour" emphasis />
                <Figure value={o.lostReleases.lastDay} label={tt('releases.day')} testId="lost-day" />
                <Figure value={o.lostReleases.lastWeek} label={tt('releases.week')} testId="lost-week" />
              </div>
              <Sparkline points={trend('releases.lost_last_hour')} label={`${tt('releases.title')} — ${t('trend24h')}`} />
              <p className="small muted">{tt('releases.hint')}</p>
            </Tile>

            <Tile title={tt('outbox.title')} href="/ops/messaging" alerts={alertsOf('outbox')} testId="tile-outbox">
              <table className="ops-mini-table">
                <tbody>
                  {o.outboxes.map((x) => (
                    <tr key={x.outbox}>
                      <th scope="row">{x.outbox}</th>
                      <td className="num" data-testid={`outbox-pending-${x.outbox}`}>{x.pending}</td>
                      <td className="small muted">{x.oldestPendingAgeMs === null ? tt('outbox.none') : tt('outbox.oldest', { age: duration(x.oldestPendingAgeMs) })}</td>
                      <td><Sparkline points={trend(`outbox.pending.${x.outbox}`)} label={`${x.outbox} ${tt('outbox.pending')} — ${t('trend24h')}`} width={80} height={20} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <p className="small muted">{tt('outbox.hint', { threshold: o.thresholds.outboxBacklog })}</p>
            </Tile>

            <Tile title={tt('consumers.title')} href="/ops/messaging#consumers" alerts={alertsOf('consumers')} testId="tile-consumers">
              {o.consumers ? (
                <table className="ops-mini-table">
                  <tbody>
                    {o.consumers.map((c) => (
                      <tr key={c.group}>
                        <th scope="row" className="mono small">{c.group}</th>
                        <td className="num">{c.lag}</td>
                        <td className="small muted">{c.lag > 0 && c.estimatedLagMs !== null ? tt('consumers.behind', { age: duration(c.estimatedLagMs) }) : tt('consumers.caughtUp')}</td>
                        <td><Sparkline points={trend(`consumer.lag.${c.group}`)} label={`${c.group} — ${t('trend24h')}`} width={80} height={20} /></td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : <p className="notice notice-error small">{t('kafkaDown', { error: o.kafkaError ?? '' })}</p>}
              <p className="small muted">{tt('consumers.hint')}</p>
            </Tile>

            <Tile title={tt('dlq.title')} href="/ops/messaging#dlq" alerts={alertsOf('dlq')} testId="tile-dlq">
              {o.dlq ? (
                <table className="ops-mini-table">
                  <tbody>
                    {o.dlq.map((d) => (
                      <tr key={d.group}>
                        <th scope="row" className="mono small">{d.group}.dlq</th>
                        <td className="num" data-testid={`dlq-size-${d.group}`}>{d.size}</td>
                        <td className="small muted">{tt('dlq.toDecide')}</td>
                        <td><Sparkline points={trend(`dlq.size.${d.group}`)} label={`${d.group}.dlq — ${t('trend24h')}`} width={80} height={20} /></td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : <p className="notice notice-error small">{t('kafkaDown', { error: o.kafkaError ?? '' })}</p>}
              <p className="small muted">{tt('dlq.mismatches', { hour: o.holdMismatches.lastHour, open: o.holdMismatches.unresolved })}</p>
            </Tile>

            <Tile title={tt('delisted.title')} href="/ops/catalog" alerts={alertsOf('delisted')} testId="tile-delisted">
              <div className="ops-figures">
                <Figure value={o.delisted.propertyObjects.pastCutoff + o.delisted.projects.pastCutoff} label={tt('delisted.pastCutoff')} testId="delisted-past-cutoff" emphasis />
                <Figure value={o.delisted.propertyObjects.all} label={tt('delisted.objects', { count: o.delisted.propertyObjects.all })} testId="delisted-objects" />
                <Figure value={o.delisted.projects.all} label={tt('delisted.projects', { count: o.delisted.projects.all })} testId="delisted-projects" />
              </div>
              <Sparkline points={trend('delisted.all')} label={`${tt('delisted.title')} — ${t('trend24h')}`} />
              <p className="small muted">{tt('delisted.hint')}</p>
            </Tile>

            <Tile title={tt('jobs.title')} href="/ops/jobs" alerts={alertsOf('jobs')} testId="tile-jobs">
              <table className="ops-mini-table">
                <tbody>
                  {o.jobs.map((j) => (
                    <tr key={j.name}>
                      <th scope="row" className="mono small">{j.name}</th>
                      <td>{j.paused ? <span className="badge run-paused"><span aria-hidden="true">‖ </span>{tt('jobs.paused')}</span> : <RunStatusBadge status={j.lastRun?.status} />}</td>
                      <td className="small muted" title={j.lastRun ? j.lastRun.startedAt.toISOString() : undefined}>{j.lastRun ? tt('jobs.ago', { age: duration(o.asOf.getTime() - j.lastRun.startedAt.getTime()) }) : tt('jobs.never')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Tile>

            <Tile title={tt('reconciliation.title')} href="/ops/reconciliation" alerts={alertsOf('reconciliation')} testId="tile-reconciliation">
              {o.reconciliation ? (
                <>
                  <div className="ops-figures">
                    <Figure value={o.reconciliation.total} label={tt('reconciliation.mismatches')} emphasis />
                  </div>
                  <Sparkline points={trend('reconciliation.mismatches')} label={`${tt('reconciliation.title')} — ${t('trend24h')}`} />
                  <p className="small muted">{tt('reconciliation.at')} <Time value={o.reconciliation.at} /></p>
                </>
              ) : <p className="small muted">{tt('reconciliation.none')}</p>}
            </Tile>
          </div>
        </>
      )}
    </div>
  );
}
