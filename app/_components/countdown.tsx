'use client';
import { memo, useMemo } from 'react';
import { useLocale, useTranslations } from 'next-intl';
import { useNow } from './clock';
import { durationWords } from './duration-words';
import { useFormat } from './format';

/** Which deadline a countdown runs to: the reserve's or the booking's (the words say which). */
export type Deadline = 'reserve' | 'booking';

/**
 * A live countdown to a hold's deadline, in words with units ("осталось 49 мин 18 с"), naming the
 * deadline when given ("резерв: осталось …"). Past the deadline it says so in words ("просрочено на
 * 9 мин") with a marker — the text carries it, not only the sign or the colour (the safety-net job
 * will release such a hold; ops should know it is stuck).
 */
export const Countdown = memo(function Countdown({ until, deadline, compact = false }: { until: Date; deadline?: Deadline; compact?: boolean }) {
  const now = useNow();
  const t = useTranslations('countdown');
  const locale = useLocale();
  const f = useFormat();
  // the deadline does not move with the clock: its two date formats are not redone on every tick
  const title = useMemo(() => `${f.dateTime(until)} · ${f.utc(until)}`, [f, until]);
  // compact: a chessboard cell's timer — hidden from assistive tech (the cell's name carries the
  // deadline) and one text node, the overdue marker included (1,000 cells on a board)
  if (now === 0) return <span className={compact ? 'countdown cell-timer' : 'countdown'} aria-hidden="true">&nbsp;</span>;
  const left = until.getTime() - now;
  const overdue = left < 0;
  const time = durationWords(left, locale === 'en' ? 'en' : 'ru');
  const text = compact
    ? (overdue ? t('overdueShort', { time }) : time)
    : deadline
      ? t(overdue ? `${deadline}Overdue` : `${deadline}Left`, { time })
      : t(overdue ? 'overdueBy' : 'left', { time });
  if (compact) {
    return (
      <span className={`countdown cell-timer${overdue ? ' countdown-overdue' : ''}`} aria-hidden="true" data-overdue={overdue ? 'true' : undefined}
        data-remaining-ms={Math.round(left)} title={title}>
        {overdue ? `⚠ ${text}` : text}
      </span>
    );
  }
  return (
    <span
      className={`countdown${overdue ? ' countdown-overdue' : ''}`}
      data-overdue={overdue ? 'true' : undefined}
      data-deadline={deadline}
      data-remaining-ms={Math.round(left)}
      title={title}
    >
      {overdue ? <span aria-hidden="true">⚠ </span> : null}
      {text}
    </span>
  );
});
