'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useState } from 'react';
import { ConfirmDialog } from '@/app/_components/confirm-dialog';
import { ErrorNotice } from '@/app/_components/error-notice';
import { useFormat } from '@/app/_components/format';
import { Time } from '@/app/_components/time';
import { useTRPC, type RouterOutputs } from '@/app/_components/trpc';
import { dealHref, Freshness, LIVE, objectHref, ShortId, useDuration, useInvalidateOps, useOpsAccess } from './common';
import { OpsTable } from './ops-table';

type DlqRow = RouterOutputs['ops']['dashboard']['dlqMessages']['rows'][number];
type DlqRef = Pick<DlqRow, 'topic' | 'partition' | 'offset'>;
const keyOf = (r: DlqRef) => `${r.topic}/${r.partition}/${r.offset}`;

export function MessagingPage() {
  const t = useTranslations('ops.messaging');
  const to = useTranslations('ops');
  const trpc = useTRPC();
  const f = useFormat();
  const duration = useDuration();
  const m = useQuery(trpc.ops.dashboard.messaging.queryOptions(undefined, LIVE));
  const d = m.data;
  return (
    <div className="ops-page">
      <div className="ops-head">
        <h2>{t('outboxTitle')}</h2>
        <Freshness asOf={d?.asOf} fetching={m.isFetching} />
      </div>
      <ErrorNotice error={m.error} />
      <OpsTable
        testId="outbox-table"
        caption={t('outboxTitle')}
        auto
        rows={d?.outboxes}
        rowKey={(o) => o.outbox}
        rowProps={(o) => ({ className: o.pending > 1000 ? 'row-alert' : undefined })}
        columns={[
          { key: 'outbox', header: t('outbox'), rowHeader: 'row', className: 'mono', cell: (o) => `${o.outbox}.outbox` },
          { key: 'pending', header: t('pending'), headerClassName: 'num', className: 'num strong', cell: (o) => <>{f.integer(o.pending)}{o.pending > 1000 ? <span className="text-alert"> ⚠ {t('overThreshold')}</span> : null}</> },
          { key: 'oldest', header: t('oldestPending'), cell: (o) => (o.oldestPendingAgeMs === null ? <span className="muted">—</span> : <>{duration(o.oldestPendingAgeMs)} <span className="muted small">(<Time value={o.oldestPendingAt} seconds />)</span></>) },
          { key: 'rate', header: t('publishRate'), headerClassName: 'num', className: 'num', cell: (o) => <>{f.area(o.publishRatePerMin)} <span className="muted small">{t('perMin', { n: o.publishedLast5Min })}</span></> },
          { key: 'failing', header: t('failing'), headerClassName: 'num', className: 'num', cell: (o) => (o.failing > 0 ? <span className="text-alert strong">⚠ {o.failing}</span> : 0) },
        ]}
      />
      {d && d.failing.length > 0 ? (
        <OpsTable
          testId="failing-rows-table"
          caption={t('failingRows')}
          captionClassName="ops-caption"
          rows={d.failing}
          rowKey={(r) => `${r.outbox}-${r.id}`}
          columns={[
            { key: 'outbox', header: t('outbox'), className: 'mono', cell: (r) => r.outbox },
            { key: 'id', header: t('id'), className: 'mono', cell: (r) => <>{r.id}<div><ShortId id={r.messageId} /></div></> },
            { key: 'topic', header: t('topic'), className: 'mono small', cell: (r) => r.topic },
            { key: 'key', header: t('key'), cell: (r) => <ShortId id={r.key} /> },
            { key: 'created', header: t('created'), cell: (r) => <Time value={r.createdAt} seconds /> },
            { key: 'attempts', header: t('attempts'), headerClassName: 'num', className: 'num', cell: (r) => r.attempts },
            { key: 'lastError', header: t('lastError'), className: 'small text-alert ops-wrap', cell: (r) => r.lastError },
            { key: 'nextAttempt', header: t('nextAttempt'), cell: (r) => <Time value={r.nextAttemptAt} seconds /> },
          ]}
        />
      ) : null}

      <section id="consumers" className="ops-section" aria-labelledby="consumers-title">
        <div className="ops-head"><h2 id="consumers-title">{t('consumersTitle')}</h2></div>
        {d?.kafkaError ? <p className="notice notice-error">{to('kafkaDown', { error: d.kafkaError })}</p> : null}
        <OpsTable
          testId="consumers-table"
          caption={t('consumersTitle')}
          auto
          // one row a topic; the group's name and its time behind span the group's rows
          rows={d?.consumers?.flatMap((g) => g.topics.map((tp, i) => ({ g, tp, first: i === 0 })))}
          rowKey={({ g, tp }) => `${g.group}-${tp.topic}`}
          rowProps={({ tp }) => ({ className: tp.lag > 0 ? 'row-warn' : undefined })}
          columns={[
            {
              key: 'group', header: t('group'), rowHeader: 'rowgroup', className: 'mono small', rowSpan: ({ g, first }) => (first ? g.topics.length : 0),
              cell: ({ g }) => <>{g.group}<div className="muted">{t('groupLag', { n: g.lag })}</div></>,
            },
            { key: 'topic', header: t('topic'), className: 'mono small', cell: ({ tp }) => tp.topic },
            { key: 'committed', header: t('committed'), headerClassName: 'num', className: 'num', cellProps: ({ tp }) => ({ title: tp.partitions.map((p) => `p${p.partition}: ${p.committed ?? '—'}`).join(', ') }), cell: ({ tp }) => f.integer(tp.committed) },
            { key: 'end', header: t('end'), headerClassName: 'num', className: 'num', cellProps: ({ tp }) => ({ title: tp.partitions.map((p) => `p${p.partition}: ${p.end}`).join(', ') }), cell: ({ tp }) => f.integer(tp.end) },
            { key: 'lag', header: t('lag'), headerClassName: 'num', className: 'num strong', cell: ({ tp }) => f.integer(tp.lag) },
            {
              key: 'behind', header: t('behind'), rowSpan: ({ g, first }) => (first ? g.topics.length : 0),
              cell: ({ g }) => (g.lag > 0 && g.estimatedLagMs !== null ? <span className={g.estimatedLagMs > 5 * 60_000 ? 'text-alert strong' : undefined}>≈ {duration(g.estimatedLagMs)}</span> : <span className="muted">{t('caughtUp')}</span>),
            },
          ]}
        />
      </section>

      <DlqSection sizes={d?.dlq ?? null} />
    </div>
  );
}

function DlqSection({ sizes }: { sizes: RouterOutputs['ops']['dashboard']['messaging']['dlq'] }) {
  const t = useTranslations('ops.messaging');
  const trpc = useTRPC();
  const invalidate = useInvalidateOps();
  const { canAct } = useOpsAccess();
  const [showDecided, setShowDecided] = useState(false);
  const [acting, setActing] = useState<{ row: DlqRow; action: 'requeue' | 'discard' } | null>(null);
  // bulk: the selected undecided records (by topic/partition/offset), decided with one reason
  const [selected, setSelected] = useState<Set<string>>(() => new Set());
  const [bulk, setBulk] = useState<'requeue' | 'discard' | null>(null);
  const [bulkResult, setBulkResult] = useState<{ action: 'requeue' | 'discard'; ok: number; refused: Record<string, number> } | null>(null);
  const list = useQuery(trpc.ops.dashboard.dlqMessages.queryOptions({ includeDecided: showDecided }, LIVE));
  const queryClient = useQueryClient();
  // the action's answer says which records are decided: the table shows that at once (no rows with live
  // buttons until the next read), and the read that follows confirms it
  const markDecided = (refs: DlqRef[], decision: 'requeued' | 'discarded') => {
    const decided = new Set(refs.map(keyOf));
    queryClient.setQueryData(trpc.ops.dashboard.dlqMessages.queryKey({ includeDecided: showDecided }), (old) => old && {
      ...old,
      rows: showDecided
        ? old.rows.map((r) => (decided.has(keyOf(r)) ? { ...r, decision, nextRetry: decision === 'requeued' ? 'requeued' as const : 'none' as const } : r))
        : old.rows.filter((r) => !decided.has(keyOf(r))),
    });
  };
  const done = (decision: 'requeued' | 'discarded') => () => { if (acting) markDecided([acting.row], decision); setActing(null); void invalidate(); };
  const requeue = useMutation(trpc.ops.dashboard.requeueDlq.mutationOptions({ onSuccess: done('requeued') }));
  const discard = useMutation(trpc.ops.dashboard.discardDlq.mutationOptions({ onSuccess: done('discarded') }));
  const bulkDone = (action: 'requeue' | 'discard') => (outcomes: (DlqRef & { ok: boolean; code: string | null })[]) => {
    markDecided(outcomes.filter((o) => o.ok), action === 'requeue' ? 'requeued' : 'discarded');
    const refused: Record<string, number> = {};
    for (const o of outcomes) if (!o.ok && o.code) refused[o.code] = (refused[o.code] ?? 0) + 1;
    setBulkResult({ action, ok: outcomes.filter((o) => o.ok).length, refused });
    setBulk(null);
    setSelected(new Set());
    void invalidate();
  };
  const requeueMany = useMutation(trpc.ops.dashboard.requeueDlqMany.mutationOptions({ onSuccess: bulkDone('requeue') }));
  const discardMany = useMutation(trpc.ops.dashboard.discardDlqMany.mutationOptions({ onSuccess: bulkDone('discard') }));
  const ref = (r: DlqRow) => ({ topic: r.topic, partition: r.partition, offset: r.offset });
  const mutation = acting?.action === 'requeue' ? requeue : discard;
  const bulkMutation = bulk === 'requeue' ? requeueMany : discardMany;
  const selectable = (list.data?.rows ?? []).filter((r) => !r.decision);
  const chosen = selectable.filter((r) => selected.has(keyOf(r)));
  const toggle = (r: DlqRow) => setSelected((prev) => {
    const next = new Set(prev);
    if (next.has(keyOf(r))) next.delete(keyOf(r)); else next.add(keyOf(r));
    return next;
  });
  return (
    <section id="dlq" className="ops-section" aria-labelledby="dlq-title">
      <div className="ops-head">
        <h2 id="dlq-title">{t('dlqTitle')}</h2>
        {sizes?.map((s) => <span key={s.group} className="badge ops-count" data-testid={`dlq-count-${s.group}`}>{s.group}.dlq: {s.size}</span>)}
        <label className="field-inline small"><input type="checkbox" checked={showDecided} onChange={(e) => setShowDecided(e.target.checked)} /> {t('showDecided')}</label>
      </div>
      <p className="small muted">{t('dlqIntro')}</p>
      {canAct && selectable.length > 0 ? (
        <div className="actions-inline bulk-bar" role="group" aria-label={t('bulkLabel')} data-testid="dlq-bulk">
          <span className="small" aria-live="polite">{t('selectedCount', { count: chosen.length })}</span>
          <button type="button" className="btn btn-small btn-primary" data-action="requeue-selected" disabled={chosen.length === 0 || chosen.some((r) => !r.originalTopic)} onClick={() => { requeueMany.reset(); setBulkResult(null); setBulk('requeue'); }}>{t('requeueSelected')}</button>
          <button type="button" className="btn btn-small btn-danger-outline" data-action="discard-selected" disabled={chosen.length === 0} onClick={() => { discardMany.reset(); setBulkResult(null); setBulk('discard'); }}>{t('discardSelected')}</button>
        </div>
      ) : null}
      {bulkResult ? (
        <p className={`notice ${Object.keys(bulkResult.refused).length ? 'notice-warning' : 'notice-success'} small`} role="status" data-testid="dlq-bulk-result">
          {t(bulkResult.action === 'requeue' ? 'bulkRequeued' : 'bulkDiscarded', { count: bulkResult.ok })}
          {Object.entries(bulkResult.refused).map(([code, n]) => ` · ${t('bulkRefused', { count: n, reason: t.has(`refusal.${code}`) ? t(`refusal.${code}`) : code })}`).join('')}
        </p>
      ) : null}
      <ErrorNotice error={list.error} />
      {list.data?.syncError ? <p className="notice notice-warning small">{t('dlqSyncError', { error: list.data.syncError })}</p> : null}
      <OpsTable
        testId="dlq-table"
        caption={t('dlqTitle')}
        rows={list.data?.rows}
        rowKey={(r) => `${r.topic}-${r.partition}-${r.offset}`}
        rowProps={(r) => ({ 'data-dlq-offset': r.offset })}
        empty={{ text: t('dlqEmpty'), testId: 'dlq-empty' }}
        columns={[
          canAct && {
            key: 'select',
            headerClassName: 'select-col',
            header: (
              <input
                type="checkbox"
                aria-label={t('selectAll')}
                checked={selectable.length > 0 && chosen.length === selectable.length}
                disabled={selectable.length === 0}
                onChange={(e) => setSelected(e.target.checked ? new Set(selectable.map(keyOf)) : new Set())}
              />
            ),
            className: 'select-col',
            cell: (r) => (r.decision ? null : <input type="checkbox" aria-label={t('selectOne', { group: r.consumerGroup, offset: r.offset })} checked={selected.has(keyOf(r))} onChange={() => toggle(r)} />),
          },
          {
            key: 'seen', header: t('seen'), className: 'small', cell: (r) => (
              <>
                <div>{t('first')} <Time value={r.firstSeenAt} seconds /></div>
                <div>{t('last')} <Time value={r.lastSeenAt} seconds /></div>
              </>
            ),
          },
          {
            key: 'attempts', header: t('attempts'), className: 'small', cell: (r) => (
              <span data-testid="dlq-attempts">
                <span className={r.attempts > 1 ? 'text-alert strong' : 'strong'}>{t('attemptsCount', { count: r.attempts })}</span>
                <div className="muted">{t(`nextRetry.${r.nextRetry}`)}</div>
              </span>
            ),
          },
          { key: 'group', header: t('group'), className: 'mono small', cell: (r) => <>{r.consumerGroup}<div className="muted">p{r.partition} @ {r.offset}</div></> },
          { key: 'errorCode', header: t('errorCode'), cell: (r) => <><span className="badge severity-warning">{r.errorCode ?? '—'}</span><div className="small muted ops-wrap">{r.errorMessage}</div></> },
          { key: 'original', header: t('original'), className: 'mono small ops-wrap', cell: (r) => <>{r.originalTopic}<div className="muted">p{r.originalPartition ?? '—'} @ {r.originalOffset ?? '—'}</div><div>{t('key')}: <ShortId id={r.key} /></div></> },
          {
            key: 'message', header: t('message'), className: 'small', cell: (r) => (
              <>
                <div>{t('messageId')}: <ShortId id={r.messageId} /></div>
                {r.value ? (
                  <details className="raw-json">
                    <summary>{t('payload')}</summary>
                    <pre>{pretty(r.value)}</pre>
                  </details>
                ) : null}
              </>
            ),
          },
          {
            key: 'links', header: t('links'), className: 'small', cell: (r) => (r.holdMismatch ? (
              <ul className="plain-list" data-testid="dlq-mismatch-links">
                <li>{t('object')}: {r.holdMismatch.objectNumber && objectHref(r.holdMismatch) ? <Link href={objectHref(r.holdMismatch)!} className="strong">{r.holdMismatch.objectNumber}</Link> : <ShortId id={r.holdMismatch.propertyObjectId} />} <span className="muted">({r.holdMismatch.objectStatus})</span></li>
                <li>{t('eventDeal')}: <ShortId id={r.holdMismatch.eventDealId} href={r.holdMismatch.eventDealId ? dealHref(r.holdMismatch.eventDealId) : undefined} /></li>
                <li>{t('holdDeal')}: <ShortId id={r.holdMismatch.holdDealId} href={r.holdMismatch.holdDealId ? dealHref(r.holdMismatch.holdDealId) : undefined} /></li>
                {r.holdMismatch.bookingId ? <li><Link href={`/bookings/${r.holdMismatch.bookingId}`}>{t('timeline')}</Link></li> : null}
                {r.holdMismatch.detail ? <li className="muted">{r.holdMismatch.detail}</li> : null}
              </ul>
            ) : r.aggregateId ? <span>{t('aggregate')}: <ShortId id={r.aggregateId} /></span> : <span className="muted">—</span>),
          },
          {
            key: 'decision', header: canAct ? t('decision') : t('decisionState'), cell: (r) => (r.decision
              ? <span className="small"><span className="badge run-skipped">{t(`decided.${r.decision}`)}</span><div className="muted">{r.decisionReason}</div></span>
              : canAct ? (
                <span className="actions-inline">
                  <button type="button" className="btn btn-small btn-primary" data-action="requeue" disabled={!r.originalTopic} onClick={() => { requeue.reset(); setActing({ row: r, action: 'requeue' }); }}>{t('requeue')}</button>
                  <button type="button" className="btn btn-small btn-danger-outline" data-action="discard" onClick={() => { discard.reset(); setActing({ row: r, action: 'discard' }); }}>{t('discard')}</button>
                </span>
              ) : <span className="muted small">{t('undecided')}</span>),
          },
        ]}
      />
      <ConfirmDialog
        open={acting !== null}
        title={acting?.action === 'requeue' ? t('requeueTitle') : t('discardTitle')}
        message={acting?.action === 'requeue' ? t('requeueMessage', { topic: acting.row.originalTopic ?? '' }) : t('discardMessage')}
        confirmLabel={acting?.action === 'requeue' ? t('requeue') : t('discard')}
        danger={acting?.action === 'discard'}
        fields={[{ name: 'reason', label: t('reason'), required: true, multiline: true }]}
        pending={mutation.isPending}
        error={mutation.error}
        onConfirm={(v) => {
          if (!acting) return;
          const input = { ...ref(acting.row), reason: v.reason.trim() };
          if (acting.action === 'requeue') requeue.mutate(input);
          else discard.mutate(input);
        }}
        onClose={() => setActing(null)}
      />
      <ConfirmDialog
        open={bulk !== null}
        title={bulk === 'requeue' ? t('requeueSelectedTitle', { count: chosen.length }) : t('discardSelectedTitle', { count: chosen.length })}
        message={bulk === 'requeue' ? t('requeueSelectedMessage') : t('discardMessage')}
        confirmLabel={bulk === 'requeue' ? t('requeueSelected') : t('discardSelected')}
        danger={bulk === 'discard'}
        fields={[{ name: 'reason', label: t('reason'), required: true, multiline: true }]}
        pending={bulkMutation.isPending}
        error={bulkMutation.error}
        onConfirm={(v) => {
          const input = { refs: chosen.slice(0, 100).map(ref), reason: v.reason.trim() };
          if (bulk === 'requeue') requeueMany.mutate(input);
          else discardMany.mutate(input);
        }}
        onClose={() => setBulk(null)}
      />
    </section>
  );
}

function pretty(value: string): string {
  try {
    return JSON.stringify(JSON.parse(value), null, 2);
  } catch {
    return value;
  }
}
