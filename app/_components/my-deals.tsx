'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { ErrorNotice } from './error-notice';
import { Time } from './time';
import { useTRPC } from './trpc';

/**
 * "Мои сделки": the deals whose investor is the signed-in user (deal.list answers only those for an
 * investor — the server's scope, not a filter here), each linking to its page (bookings, chat,
 * timeline); a flat is chosen on the chessboard, which shows the projects of those deals' developers.
 */
export function MyDeals() {
  const t = useTranslations('myDeals');
  const tb = useTranslations('booking');
  const trpc = useTRPC();
  const list = useQuery(trpc.deal.list.queryOptions({ pageSize: 100 }));
  return (
    <section className="page" aria-labelledby="my-deals-title">
      <h1 id="my-deals-title">{t('title')}</h1>
      <p className="muted">{t('intro')}</p>
      <p><Link href="/chessboard" className="btn btn-small" data-testid="to-chessboard">{t('openChessboard')}</Link></p>
      <ErrorNotice error={list.error} />
      <div className="table-wrap" tabIndex={0} aria-busy={list.isFetching}>
        <table className="table" data-testid="my-deals-table">
          <caption className="sr-only">{t('caption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('deal')}</th>
              <th scope="col">{t('status')}</th>
              <th scope="col">{t('updatedAt')}</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.items.map((d) => (
              <tr key={d.id}>
                <td><Link href={`/deals/${d.id}`} data-testid="my-deal-link">{d.title}</Link></td>
                <td><span className={`badge deal-${d.status}`}>{tb(`dealStatus.${d.status}`)}</span></td>
                <td><Time value={d.updatedAt} /></td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.isPending ? <p className="muted">{t('loading')}</p> : null}
        {list.data && list.data.items.length === 0 ? <p className="empty-state">{t('empty')}</p> : null}
      </div>
    </section>
  );
}
