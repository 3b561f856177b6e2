'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useState } from 'react';
import { ConfirmDialog } from '@/app/_components/confirm-dialog';
import { ErrorNotice } from '@/app/_components/error-notice';
import { Time } from '@/app/_components/time';
import { useTRPC, type RouterOutputs } from '@/app/_components/trpc';
import {
  BookingStatusBadge, dealHref, Freshness, LIVE, objectHref, ObjectStatusBadge, ShortId, useDuration, useInvalidateOps, useOpsAccess,
} from './common';
import { OpsTable } from './ops-table';

type Row = RouterOutputs['ops']['dashboard']['reconciliation']['rows'][number];
const KINDS = ['booking_not_held', 'hold_without_booking', 'timer_mismatch'] as const;

export function ReconciliationPage() {
  const t = useTranslations('ops.reconciliation');
  const to = useTranslations('ops');
  const trpc = useTRPC();
  const duration = useDuration();
  const invalidate = useInvalidateOps();
  const { canAct } = useOpsAccess();
  const [acting, setActing] = useState<{ row: Row; action: Row['repairs'][number] } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const q = useQuery(trpc.ops.dashboard.reconciliation.queryOptions(undefined, LIVE));
  const repair = useMutation(trpc.ops.dashboard.repairReconciliation.mutationOptions({
    onSuccess: (r) => {
      setDone(r.action === 'republish' && 'topic' in r ? t('republished', { topic: r.topic }) : t('released'));
      setActing(null);
      void invalidate();
    },
  }));
  const repairDivergence = useMutation(trpc.ops.dashboard.repairDivergence.mutationOptions({
    onSuccess: (r) => {
      setDone(r.action === 'rehold' ? t('reheld') : t('bookingCancelled'));
      setActing(null);
      void invalidate();
    },
  }));
  // the page reads what the job found; "check now" runs its cycle (ops), a viewer can only read again
  const check = useMutation(trpc.ops.dashboard.runJobNow.mutationOptions({ onSuccess: () => void invalidate() }));
  const pending = repair.isPending || repairDivergence.isPending;
  const d = q.data;
  return (
    <div className="ops-page">
      <div className="ops-head">
        <h2>{t('title')}</h2>
        <Freshness asOf={d?.asOf ?? undefined} fetching={q.isFetching} />
        {canAct ? (
          <button type="button" className="btn btn-small" data-action="check-now" disabled={check.isPending}
            onClick={() => check.mutate({ job: 'reconciliation', reason: t('checkNowReason') })}>{t('checkNow')}</button>
        ) : <button type="button" className="btn btn-small" onClick={() => void q.refetch()}>{t('refresh')}</button>}
      </div>
      <p className="small muted">{d ? t('intro', { tolerance: duration(d.toleranceMs), settle: duration(d.settleMs) }) : null}</p>
      <ErrorNotice error={q.error ?? check.error} />
      {done ? <p className="notice notice-success" role="status">{done}</p> : null}
      {d ? (
        <div className="ops-figures ops-kinds">
          {KINDS.map((k) => (
            <div key={k} className={`ops-figure${d.counts[k] > 0 ? ' ops-figure-alert' : ''}`} data-testid={`recon-count-${k}`}>
              <span className="ops-figure-value">{d.counts[k]}</span>
              <span className="ops-figure-label">{t(`kinds.${k}.title`)}</span>
            </div>
          ))}
        </div>
      ) : <p className="muted">{to('loading')}</p>}
      <OpsTable
        testId="reconciliation-table"
        caption={t('title')}
        rows={d?.rows}
        rowKey={(r) => `${r.kind}-${r.propertyObjectId}-${r.bookingId ?? ''}`}
        rowProps={(r) => ({ 'data-kind': r.kind, 'data-object-id': r.propertyObjectId })}
        empty={{ text: t('empty'), testId: 'reconciliation-empty' }}
        columns={[
          { key: 'kind', header: t('kind'), cellProps: (r) => ({ title: t(`kinds.${r.kind}.hint`) }), cell: (r) => <strong>{t(`kinds.${r.kind}.title`)}</strong> },
          {
            key: 'object', header: t('object'), cell: (r) => (
              <>
                {r.objectNumber ? <Link href={objectHref(r) ?? '#'} className="strong">{r.objectNumber}</Link> : <ShortId id={r.propertyObjectId} />}
                <div className="small muted">{r.projectName ?? '—'} · {r.tenantName ?? ''}</div>
              </>
            ),
          },
          {
            key: 'chessboard', header: t('chessboard'), className: 'small', cell: (r) => (
              <>
                {r.objectStatus ? <ObjectStatusBadge status={r.objectStatus} /> : <span className="text-alert">{t('noObject')}</span>}
                {r.objectTimer ? <div><Time value={r.objectTimer} seconds /></div> : null}
                {r.holdDealId ? <div>{t('deal')} <ShortId id={r.holdDealId} href={dealHref(r.holdDealId)} /></div> : null}
              </>
            ),
          },
          {
            key: 'crm', header: t('crm'), className: 'small', cell: (r) => (
              <>
                {r.bookingId ? (
                  <>
                    <BookingStatusBadge status={r.bookingStatus ?? ''} /> <span className="muted">v{r.bookingVersion}</span>
                    {r.bookingTimer ? <div><Time value={r.bookingTimer} seconds /></div> : null}
                    <div>{t('deal')} <ShortId id={r.bookingDealId} href={r.bookingDealId ? dealHref(r.bookingDealId) : undefined} /> · <Link href={`/bookings/${r.bookingId}`}>{t('timeline')}</Link></div>
                  </>
                ) : <span className="muted">{t('noBooking')}</span>}
                {r.timerDiffMs !== null ? <div className="text-alert">{t('diff', { diff: `${r.timerDiffMs > 0 ? '+' : '−'}${duration(Math.abs(r.timerDiffMs))}` })}</div> : null}
              </>
            ),
          },
          { key: 'cause', header: t('cause'), className: 'small', cell: (r) => <><strong>{t(`causes.${r.cause}.title`)}</strong><div className="muted">{t(`causes.${r.cause}.hint`)}</div></> },
          {
            key: 'repair', header: canAct ? t('repair') : t('repairs'), cell: (r) => (
              <span className="actions-inline">
                {r.repairs.map((a) => canAct ? (
                  <button key={a} type="button" className={`btn btn-small ${a === 'manual_release' || a === 'cancel_booking' ? 'btn-danger-outline' : 'btn-primary'}`} data-action={a}
                    onClick={() => { repair.reset(); repairDivergence.reset(); setDone(null); setActing({ row: r, action: a }); }}>
                    {t(`actions.${a}`)}
                  </button>
                ) : <span key={a} className="small muted">{t(`actions.${a}`)}</span>)}
              </span>
            ),
          },
        ]}
      />
      <ConfirmDialog
        open={acting !== null}
        title={acting ? t(`actions.${acting.action}Title`, { number: acting.row.objectNumber ?? '' }) : ''}
        message={acting ? t(`actions.${acting.action}Message`, { status: acting.row.bookingStatus ?? '', version: acting.row.bookingVersion ?? '' }) : undefined}
        confirmLabel={acting ? t(`actions.${acting.action}`) : ''}
        danger={acting?.action === 'manual_release' || acting?.action === 'cancel_booking'}
        fields={[{ name: 'reason', label: t('reason'), required: true, multiline: true }]}
        pending={pending}
        error={repair.error ?? repairDivergence.error}
        onConfirm={(v) => {
          if (!acting) return;
          const reason = v.reason.trim();
          const bookingId = acting.row.bookingId;
          if (acting.action === 'manual_release') repair.mutate({ action: 'manual_release', propertyObjectId: acting.row.propertyObjectId, reason });
          else if (!bookingId) return;
          else if (acting.action === 'republish') repair.mutate({ action: 'republish', bookingId, reason });
          else repairDivergence.mutate({ action: acting.action, bookingId, reason });
        }}
        onClose={() => setActing(null)}
      />
    </div>
  );
}
