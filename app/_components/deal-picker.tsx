'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useDeferredValue, useId, useState } from 'react';
import { ENGAGED_DEAL_STATUSES } from '@/server/crm/deal';
import { ErrorNotice } from './error-notice';
import { useFormat } from './format';
import { useSessionUser } from './session';
import { useTRPC } from './trpc';

/**
 * The deal a new booking is for: an agent has dozens of open deals, so the list is
 * searchable (title or id, answered by the server: `deal.list` search) and every option says which deal
 * it is — title, client (the buyer's masked name, or the deal's investor), status, last change — never a
 * bare id. The agent is named only when the deals are not all one person's (an agent's own list would
 * repeat their name on every line), and a deal that already holds a flat says which.
 */
export function DealPicker({ tenantId, value, onChange, enabled }: { tenantId: string; value: string; onChange: (deal: { id: string; title: string } | null) => void; enabled: boolean }) {
  const t = useTranslations('drawer');
  const tb = useTranslations('booking');
  const f = useFormat();
  const trpc = useTRPC();
  const id = useId();
  const [search, setSearch] = useState('');
  const typed = useDeferredValue(search.trim());
  const deals = useQuery(trpc.deal.list.queryOptions(
    { status: [...ENGAGED_DEAL_STATUSES], tenantId, pageSize: 100, ...(typed ? { search: typed.slice(0, 80) } : {}) },
    { enabled, placeholderData: (previous) => previous },
  ));
  const me = useSessionUser();
  const agentIds = [...new Set((deals.data?.items ?? []).map((d) => d.agentId).filter((a): a is string => !!a))];
  const investorIds = [...new Set((deals.data?.items ?? []).map((d) => d.investorId).filter((a): a is string => !!a))];
  // one agent for every deal listed (or the viewer themself): saying it on each line says nothing
  const showAgent = agentIds.length > 1 || (agentIds.length === 1 && agentIds[0] !== me.id);
  const names = useQuery(trpc.auth.userNames.queryOptions({ ids: [...agentIds, ...investorIds] }, { enabled: enabled && agentIds.length > 0, staleTime: 300_000, placeholderData: (previous) => previous }));
  const items = deals.data?.items ?? [];
  // the chosen deal stays an option while a search narrows the list, so the form never loses it
  const chosenMissing = value && !items.some((d) => d.id === value);
  return (
    <div className="field deal-picker">
      <label htmlFor={`${id}-search`}>{t('deal')}</label>
      <input
        id={`${id}-search`}
        type="search"
        className="deal-search"
        placeholder={t('dealSearch')}
        aria-describedby={`${id}-count`}
        value={search}
        maxLength={80}
        onChange={(e) => setSearch(e.target.value)}
      />
      <select name="dealId" aria-label={t('deal')} value={value} onChange={(e) => {
        const deal = items.find((d) => d.id === e.target.value);
        if (deal) onChange({ id: deal.id, title: deal.title });
        else if (!e.target.value) onChange(null);
      }} required>
        <option value="">{deals.isPending ? t('loading') : t('pickDeal')}</option>
        {chosenMissing ? <option value={value}>{t('dealChosen')}</option> : null}
        {items.map((d) => (
          <option key={d.id} value={d.id} data-held={d.heldObjectId ? 'true' : undefined}>
            {[
              d.title,
              d.buyerName ?? (d.investorId ? names.data?.[d.investorId] : null),
              tb(`dealStatus.${d.status}`),
              showAgent && d.agentId ? names.data?.[d.agentId] : null,
              f.dateTime(new Date(d.updatedAt)),
              d.heldObjectId ? t('dealHolds', { number: d.heldObjectNumber ?? '—' }) : null,
            ].filter(Boolean).join(' · ')}
          </option>
        ))}
      </select>
      <span id={`${id}-count`} className="muted small" aria-live="polite">
        {deals.isFetching ? t('loading') : t('dealsFound', { count: deals.data?.total ?? 0 })}
      </span>
      <ErrorNotice error={deals.error} />
    </div>
  );
}
