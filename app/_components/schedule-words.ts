/**
 * A node-cron schedule in words for the ops pages ("каждые 10 с", "ежедневно в 03:30 МСК" instead
 * of `*\/10 * * * * *`). Covers the shapes the jobs use (every N seconds / minutes, once a minute at a
 * second, once an hour, daily at a time); anything else answers null and the page shows the raw
 * expression. Pure: the unit test pins every schedule of server/platform/env.ts.
 */
export type ScheduleLocale = 'ru' | 'en';

const ZONE: Record<string, Record<ScheduleLocale, string>> = {
  'Europe/Moscow': { ru: 'МСК', en: 'MSK' },
  UTC: { ru: 'UTC', en: 'UTC' },
  'Etc/UTC': { ru: 'UTC', en: 'UTC' },
};

const isNum = (s: string) => /^\d{1,2}$/.test(s);
const stepOf = (s: string) => (/^\*\/\d{1,2}$/.test(s) ? Number(s.slice(2)) : null);
const pad = (n: number | string) => String(n).padStart(2, '0');

export function scheduleWords(expr: string, timezone: string, locale: ScheduleLocale): string | null {
  const parts = expr.trim().split(/\s+/);
  if (parts.length === 5) parts.unshift('0');
  if (parts.length !== 6) return null;
  const [sec, min, hour, dom, month, dow] = parts;
  if (dom !== '*' || month !== '*' || dow !== '*') return null;
  const ru = locale === 'ru';
  const zone = ZONE[timezone]?.[locale] ?? timezone;

  if (min === '*' && hour === '*') {
    if (sec === '*') return ru ? 'каждую секунду' : 'every second';
    const step = stepOf(sec);
    if (step) return ru ? `каждые ${step} с` : `every ${step} s`;
    if (sec === '0') return ru ? 'каждую минуту' : 'every minute';
    if (isNum(sec)) return ru ? `каждую минуту, на ${Number(sec)}-й секунде` : `every minute at :${pad(sec)}`;
    return null;
  }
  if (!isNum(sec)) return null;
  const atSecond = Number(sec) === 0 ? '' : ru ? `, на ${Number(sec)}-й секунде` : ` at second ${Number(sec)}`;
  if (hour === '*') {
    const step = stepOf(min);
    if (step) return (ru ? `каждые ${step} мин` : `every ${step} min`) + atSecond;
    if (isNum(min)) return ru ? `каждый час в :${pad(min)}${atSecond}` : `every hour at :${pad(min)}${atSecond}`;
    return null;
  }
  if (isNum(hour) && isNum(min)) {
    const time = `${pad(hour)}:${pad(min)}${Number(sec) === 0 ? '' : `:${pad(sec)}`}`;
    return ru ? `ежедневно в ${time} ${zone}` : `daily at ${time} ${zone}`;
  }
  return null;
}
