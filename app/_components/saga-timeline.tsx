'use client';
import type { UseQueryResult } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { createContext, useContext, useMemo, useState, useSyncExternalStore } from 'react';
import { useNow } from './clock';
import { ErrorNotice } from './error-notice';
import { useFormat } from './format';
import { useSessionUser } from './session';
import { Time } from './time';
import type { RouterOutputs } from './trpc';

type Timeline = RouterOutputs['ops']['bookingTimeline'];
type Step = Timeline['steps'][number];
type Chain = Step['chains'][number];
type Hop = Chain['hops'][number];

const STATE_GLYPH: Record<Hop['state'], string> = { done: '✓', pending: '…', failed: '✕', skipped: '–' };

const shortTopic = (topic: string) => topic.replace(/^pin\.(crm|chessboard)\./, '').replace(/\.v\d+$/, '');

function download(name: string, data: unknown) {
  const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * How the timeline is shown (Temporal-style): detailed (every hop with its row) or compact (the strips
 * only); times absolute (the clock) or relative (+offset from the step's command). Kept per browser.
 */
interface ViewPrefs { compact: boolean; relative: boolean }
const PREFS_KEY = 'pin.saga-timeline.view';
const ViewContext = createContext<ViewPrefs>({ compact: false, relative: false });

// the saved preference, read through useSyncExternalStore (no effect that sets state after the first render);
// kept in memory too, so the toggles work where localStorage does not (private mode)
const prefListeners = new Set<() => void>();
let prefsInMemory = '';
function subscribePrefs(listener: () => void) {
  prefListeners.add(listener);
  window.addEventListener('storage', listener);
  return () => {
    prefListeners.delete(listener);
    window.removeEventListener('storage', listener);
  };
}
function readPrefs(): string {
  try {
    return localStorage.getItem(PREFS_KEY) ?? prefsInMemory;
  } catch {
    return prefsInMemory;
  }
}

function useViewPrefs(): [ViewPrefs, (p: ViewPrefs) => void] {
  const raw = useSyncExternalStore(subscribePrefs, readPrefs, () => '');
  const prefs = useMemo<ViewPrefs>(() => {
    try {
      const saved = JSON.parse(raw || 'null') as Partial<ViewPrefs> | null;
      return { compact: !!saved?.compact, relative: !!saved?.relative };
    } catch {
      return { compact: false, relative: false };
    }
  }, [raw]);
  const save = (p: ViewPrefs) => {
    prefsInMemory = JSON.stringify(p);
    try { localStorage.setItem(PREFS_KEY, prefsInMemory); } catch { /* private mode: memory only */ }
    prefListeners.forEach((l) => l());
  };
  return [prefs, save];
}

/** Copies text to the clipboard and says so for two seconds. */
function CopyButton({ text, label, testId }: { text: () => string; label: string; testId?: string }) {
  const t = useTranslations('saga');
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <button
      type="button"
      className="btn btn-small"
      data-testid={testId}
      onClick={() => {
        navigator.clipboard.writeText(text()).then(() => setCopied(true), () => setCopied(false));
        setTimeout(() => setCopied(null), 2000);
      }}
    >
      {copied === true ? t('copied') : copied === false ? t('copyFailed') : label}
    </button>
  );
}

/** A hop's latency: "+12 ms"; a negative one (the two clocks are transaction starts) is "≈ 0", explained on hover. */
function latencyText(ms: number, f: ReturnType<typeof useFormat>, units: Parameters<ReturnType<typeof useFormat>['duration']>[1]): string {
  return ms < 0 ? `≈ 0 ${units.ms}` : `+${f.duration(ms, units)}`;
}

/**
 * The saga of one booking as a time strip per message chain (command → outbox → Kafka → chessboard →
 * status-changed → Kafka → catalog): each hop's width is its latency from the previous one, failures
 * in a strong colour, pending hops hatched. Raw rows per hop; the whole history exports as JSON.
 */
export function SagaTimelineView({ bookingId, query }: { bookingId: string; query: UseQueryResult<Timeline, unknown> }) {
  const t = useTranslations('saga');
  const data = query.data;
  const [prefs, setPrefs] = useViewPrefs();
  return (
    <ViewContext.Provider value={prefs}>
    <div className={`saga${prefs.compact ? ' saga-compact' : ''}`} data-testid="saga-timeline">
      <div className="saga-head">
        <h2>{t('title')}</h2>
        {data ? (
          // a divergence is never "all hops done": the hops arrived, but crm and chessboard disagree
          <span className={`badge ${data.hasFailures || data.divergence ? 'hop-failed' : data.hasPending ? 'hop-pending' : 'hop-done'}`} data-testid="saga-state">
            <span aria-hidden="true">{data.hasFailures || data.divergence ? '✕ ' : data.hasPending ? '… ' : '✓ '}</span>
            {data.hasFailures ? t('hasFailures') : data.divergence ? t('diverged') : data.hasPending ? t('hasPending') : t('complete')}
          </span>
        ) : null}
        {query.isFetching ? <span className="muted small" aria-live="polite">{t('refreshing')}</span> : null}
        <button
          type="button"
          className="btn btn-small"
          disabled={!data}
          onClick={() => data && download(`booking-${bookingId}-saga.json`, data)}
          data-testid="export-json"
        >
          {t('export')}
        </button>
        <CopyButton text={() => JSON.stringify(data ?? null, null, 2)} label={t('copyJson')} testId="copy-json" />
        <span className="saga-view" role="group" aria-label={t('viewLabel')}>
          <button type="button" className="btn btn-small" aria-pressed={prefs.compact} data-testid="saga-compact" onClick={() => setPrefs({ ...prefs, compact: !prefs.compact })}>
            {t('compact')}
          </button>
          <button type="button" className="btn btn-small" aria-pressed={prefs.relative} data-testid="saga-relative" onClick={() => setPrefs({ ...prefs, relative: !prefs.relative })}>
            {t('relativeTimes')}
          </button>
        </span>
      </div>
      <ErrorNotice error={query.error} />
      {query.isPending ? <p className="muted">{t('loading')}</p> : null}
      {data && data.steps.length === 0 ? <p className="empty-state">{t('empty')}</p> : null}
      {data && data.steps.length > 0 && !data.eventsOnRecord ? <p className="notice" data-testid="saga-no-events">{t('noEventsOnRecord')}</p> : null}
      <ol className="saga-steps">
        {data?.steps.map((step) => <StepView key={step.key} step={step} eventsOnRecord={data.eventsOnRecord} />)}
      </ol>
    </div>
    </ViewContext.Provider>
  );
}

function StepView({ step, eventsOnRecord }: { step: Step; eventsOnRecord: boolean }) {
  const t = useTranslations('saga');
  const tb = useTranslations('booking');
  const c = step.command;
  const statusName = (s: string | null) => (s ? (tb.has(`status.${s}`) ? tb(`status.${s}`) : s) : '∅');
  const { compact } = useContext(ViewContext);
  const technical = useTechnical();
  return (
    <li className="saga-step" data-step={step.key} data-command={c?.action}>
      <div className="step-head">
        {c ? (
          <>
            <strong>{t.has(`action.${c.action}`) ? t(`action.${c.action}`) : c.action}</strong>{' '}
            <span>{statusName(c.fromStatus)} → {statusName(c.toStatus)}</span>{' '}
            <span className="muted small">
              {c.actorType === 'system' ? t('system') : c.actorName ?? t('someone')} · <Time value={c.at} seconds />
            </span>
            {c.reason ? <div className="small muted">{c.reason}</div> : null}
            {compact || !technical ? null : <RawJson value={c.raw} />}
          </>
        ) : step.release ? (
          <>
            <strong className="hop-failed-text" data-testid="release-step">
              {step.release.source === 'Manual'
                ? t('releasedByHand', { who: step.release.actorName ?? t('someone') })
                : t.has(`releasedBy.${step.release.source}`) ? t(`releasedBy.${step.release.source}`) : t('safetyNet')}
            </strong>{' '}
            <span className="muted small"><Time value={step.release.at} seconds /></span>
            {step.release.reason ? <div className="small muted">{step.release.reason}</div> : null}
          </>
        ) : step.key.startsWith('release:') ? (
          <strong className="hop-failed-text">{t('safetyNet')}</strong>
        ) : (
          <strong>{t('unattributed')}</strong>
        )}
      </div>
      {step.chains.length === 0 && c && eventsOnRecord ? <p className="muted small">{t('noEvents')}</p> : null}
      {step.chains.map((chain) => (
        <ChainView key={chain.messageId} chain={chain} startAt={c?.at ?? null} />
      ))}
    </li>
  );
}

function ChainView({ chain, startAt }: { chain: Chain; startAt: Date | null }) {
  const t = useTranslations('saga');
  const f = useFormat();
  const now = useNow();
  const { compact, relative } = useContext(ViewContext);
  const technical = useTechnical();
  const units = { ms: t('units.ms'), s: t('units.s'), min: t('units.min'), h: t('units.h'), d: t('units.d') };
  const first = startAt ?? chain.hops.find((h) => h.at)?.at ?? null;
  const pending = chain.hops.some((h) => h.state === 'pending');
  const times = chain.hops.map((h) => h.at?.getTime() ?? null).filter((x): x is number => x !== null);
  const lastDone = times.length ? Math.max(...times) : first?.getTime() ?? 0;
  const end = pending && now ? Math.max(now, lastDone) : lastDone;
  const span = Math.max(1, end - (first?.getTime() ?? end));
  // segment widths: each hop's latency share, with a floor so instant hops stay visible
  const segments: { hop: Chain['hops'][number]; share: number }[] = [];
  let prev = first?.getTime() ?? null;
  for (const h of chain.hops) {
    const at = h.at?.getTime() ?? (h.state === 'pending' ? end : null);
    const width = at !== null && prev !== null ? Math.max(at - prev, 0) / span : 0;
    if (at !== null) prev = at;
    const share = h.state === 'skipped' ? 0 : Math.max(width, 0.04);
    if (share > 0) segments.push({ hop: h, share });
  }

  return (
    <div className="chain" data-message-id={chain.messageId} data-event={shortTopic(chain.topic)}>
      <div className="chain-head small">
        {technical ? <><span className="topic">{shortTopic(chain.topic)}</span> <span className="mono muted">{chain.messageId.slice(0, 8)}</span></> : null}
        {first ? <span className="muted"> · {f.duration(span, units)}</span> : null}
      </div>
      <div className="strip" role="img" aria-label={t('stripLabel', { topic: shortTopic(chain.topic) })}>
        {segments.map(({ hop, share }) => (
          <div
            key={hop.key}
            className={`strip-seg hop-${hop.state}`}
            style={{ flexGrow: share }}
            title={`${t(`hop.${hop.kind}`)} · ${t(`state.${hop.state}`)}${hop.latencyMs !== null ? ` · ${latencyText(hop.latencyMs, f, units)}` : ''}`}
          />
        ))}
      </div>
      {compact ? null : (
      <ol className="hops">
        {[...chain.hops, ...(chain.participants ?? [])].map((hop) => (
          <li key={hop.key} className={`hop hop-row-${hop.state}`} data-kind={hop.kind} data-state={hop.state}>
            <span className={`hop-state hop-${hop.state}`} aria-hidden="true">{STATE_GLYPH[hop.state]}</span>
            <span className="hop-name">{t(`hop.${hop.kind}`)}</span>
            <span className="hop-state-text small">{t(`state.${hop.state}`)}</span>
            <span className="hop-time small">
              {!hop.at ? '—' : relative && first ? (
                <time dateTime={hop.at.toISOString()} title={f.dateTimeSeconds(hop.at)} data-relative="">{`T+${f.duration(Math.max(0, hop.at.getTime() - first.getTime()), units)}`}</time>
              ) : <Time value={hop.at} precise />}
            </span>
            <span className="hop-latency small mono" title={hop.latencyMs !== null && hop.latencyMs < 0 ? t('negativeLatency') : undefined}>
              {hop.latencyMs !== null ? latencyText(hop.latencyMs, f, units) : ''}
            </span>
            {technical ? <span className="hop-detail small muted">{hop.detail ?? ''}</span> : null}
            {technical && hop.raw ? <RawJson value={hop.raw} /> : null}
          </li>
        ))}
      </ol>
      )}
    </div>
  );
}

/**
 * Message ids, topics, inbox results and raw JSON are ops' tools: a manager or an agent sees the steps in
 * words (docs/glossary.md) and the ops role sees the rest too.
 */
function useTechnical(): boolean {
  return useSessionUser().role === 'ops';
}

function RawJson({ value }: { value: unknown }) {
  const t = useTranslations('saga');
  return (
    <details className="raw-json">
      <summary>{t('raw')}</summary>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}
