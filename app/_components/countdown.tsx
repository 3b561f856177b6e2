'use client';
import { memo } from 'react';
import { useTranslations } from 'next-intl';
import { useNow } from './clock';
import { countdownText, useFormat } from './format';

/**
 * A live countdown to a hold's deadline. Past the deadline it shows the overdue time with a marker
 * (the safety-net job will release such a hold; ops should know it is stuck).
 */
export const Countdown = memo(function Countdown({ until, compact = false }: { until: Date; compact?: boolean }) {
  const now = useNow();
  const t = useTranslations('countdown');
  const f = useFormat();
  if (now === 0) return <span className="countdown" aria-hidden="true">&nbsp;</span>;
  const left = until.getTime() - now;
  const overdue = left < 0;
  const text = countdownText(left, t('dayUnit'));
  return (
    <span
      className={`countdown${overdue ? ' countdown-overdue' : ''}`}
      data-overdue={overdue ? 'true' : undefined}
      data-remaining-ms={Math.round(left)}
      title={`${f.dateTime(until)} · ${f.utc(until)}`}
    >
      {overdue ? <span aria-hidden="true">⚠ </span> : null}
      {compact ? text : overdue ? t('overdueBy', { time: text.replace('−', '') }) : t('left', { time: text })}
    </span>
  );
});
