'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { ErrorNotice } from './error-notice';
import { useFormat } from './format';
import { useSessionUser } from './session';
import { Time } from './time';
import { useTRPC } from './trpc';
import './rewards.css';

/** "Вознаграждения": an agent's own rewards; a developer manager (or PIN manager) the totals per agent. */
export function RewardsPage() {
  const t = useTranslations('rewards');
  const { role } = useSessionUser();
  return (
    <section className="page" aria-labelledby="rewards-title">
      <h1 id="rewards-title">{t('title')}</h1>
      <p className="muted">{t('intro')}</p>
      {role === 'agent' ? <MyRewards /> : <RewardTotals />}
    </section>
  );
}

function MyRewards() {
  const t = useTranslations('rewards');
  const trpc = useTRPC();
  const f = useFormat();
  const list = useQuery(trpc.rewards.mine.queryOptions({ pageSize: 100 }));
  const totals = list.data?.totals;
  // a programme's percentage in the locale's digits ("1,5 %" / "1.5%"), up to hundredths
  const percent = new Intl.NumberFormat(f.locale === 'en' ? 'en-US' : 'ru-RU', { maximumFractionDigits: 2 });
  return (
    <>
      <ErrorNotice error={list.error} />
      {totals ? (
        <dl className="summary-row" data-testid="reward-sums">
          <div><dt>{t('accrued')}</dt><dd>{f.money(totals.accrued)}</dd></div>
          <div><dt>{t('payable')}</dt><dd>{f.money(totals.payable)}</dd></div>
          <div><dt>{t('void')}</dt><dd>{f.money(totals.void)}</dd></div>
        </dl>
      ) : null}
      <div className="table-wrap" tabIndex={0} aria-busy={list.isFetching}>
        <table className="table" data-testid="rewards-table">
          <caption className="sr-only">{t('caption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('flat')}</th>
              <th scope="col">{t('deal')}</th>
              <th scope="col">{t('rule')}</th>
              <th scope="col">{t('amount')}</th>
              <th scope="col">{t('statusLabel')}</th>
              <th scope="col">{t('paidAt')}</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.items.map((a) => (
              <tr key={a.id} data-testid="reward-row">
                <td>
                  <Link href={`/bookings/${a.bookingId}`}>{a.object?.number ?? a.propertyObjectId.slice(0, 8)}</Link>
                  {a.object ? <div className="muted small">{a.object.projectName} · {a.object.buildingName}</div> : null}
                </td>
                <td className="small"><Link href={`/deals/${a.dealId}`}>{a.dealTitle ?? a.dealId.slice(0, 8)}</Link></td>
                <td className="small">
                  {a.ruleKind === 'percent' ? t('percent', { value: percent.format(a.ruleValue ?? 0), price: a.price === null ? '—' : f.money(a.price) })
                    : a.ruleKind === 'fixed' ? t('fixed') : t('none')}
                </td>
                <td className="num">{f.money(a.amount)}</td>
                <td><span className={`badge reward-${a.status}`}>{t(`status.${a.status}`)}</span></td>
                <td><Time value={a.paidAt} /></td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.isPending ? <p className="muted">{t('loading')}</p> : null}
        {list.data && list.data.items.length === 0 ? <p className="empty-state">{t('empty')}</p> : null}
      </div>
    </>
  );
}

function RewardTotals() {
  const t = useTranslations('rewards');
  const trpc = useTRPC();
  const f = useFormat();
  const totals = useQuery(trpc.rewards.totals.queryOptions());
  return (
    <>
      <ErrorNotice error={totals.error} />
      <div className="table-wrap" tabIndex={0} aria-busy={totals.isFetching}>
        <table className="table" data-testid="reward-totals-table">
          <caption className="sr-only">{t('totalsCaption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('agent')}</th>
              <th scope="col">{t('count')}</th>
              <th scope="col">{t('accrued')}</th>
              <th scope="col">{t('payable')}</th>
              <th scope="col">{t('void')}</th>
            </tr>
          </thead>
          <tbody>
            {totals.data?.map((r) => (
              <tr key={`${r.tenantId}:${r.agentId ?? ''}`} data-testid="reward-total-row">
                <td>{r.agentName ?? (r.agentId ? <span className="mono">{r.agentId.slice(0, 8)}</span> : t('unknownAgent'))}</td>
                <td className="num">{r.count}</td>
                <td className="num">{f.money(r.accrued)}</td>
                <td className="num">{f.money(r.payable)}</td>
                <td className="num">{f.money(r.void)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {totals.isPending ? <p className="muted">{t('loading')}</p> : null}
        {totals.data && totals.data.length === 0 ? <p className="empty-state">{t('empty')}</p> : null}
      </div>
    </>
  );
}
