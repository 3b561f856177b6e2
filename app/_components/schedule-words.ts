/**
 * A node-cron schedule in words for the ops pages ("каждые 10 с", "ежедневно в 03:30 МСК" instead
 * of `*\/10 * * * * *`). Covers the shapes the jobs use (every N seconds / minutes, once a minute at a
 * second, once an hour, daily at a time); anything else answers null and the page shows the raw
 * expression. Daily times are told in one zone whatever zone a job is scheduled in, so a list of jobs
 * can be compared at a glance. Pure: the unit test pins every schedule the environment (server/main/env.ts) defaults to.
 */
export type ScheduleLocale = 'ru' | 'en';

const ZONE: Record<string, Record<ScheduleLocale, string>> = {
  'Europe/Moscow': { ru: 'МСК', en: 'MSK' },
  UTC: { ru: 'UTC', en: 'UTC' },
  'Etc/UTC': { ru: 'UTC', en: 'UTC' },
};

/** The zone the ops pages tell daily times in: the one the business and the nightly windows keep. */
export const SCHEDULE_DISPLAY_ZONE = 'Europe/Moscow';

/** Minutes `zone` is ahead of UTC at the instant `at`. */
function offsetMinutes(zone: string, at: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
  }).formatToParts(at);
  const n = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return (Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) - Math.floor(at / 1000) * 1000) / 60_000;
}

/** The wall-clock seconds of the day in `to` when it is `secondsOfDay` in `from` (on the day of `at`); null for an unknown zone. */
function shiftTimeOfDay(secondsOfDay: number, from: string, to: string, at: number): number | null {
  if (from === to) return secondsOfDay;
  try {
    const day = Math.floor(at / 86_400_000) * 86_400_000;
    const wallAsUtc = day + secondsOfDay * 1000;
    const instant = wallAsUtc - offsetMinutes(from, wallAsUtc) * 60_000;
    const shifted = instant + offsetMinutes(to, instant) * 60_000;
    return ((Math.round(shifted / 1000) % 86_400) + 86_400) % 86_400;
  } catch {
    return null;
  }
}

const isNum = (s: string) => /^\d{1,2}$/.test(s);
const stepOf = (s: string) => (/^\*\/\d{1,2}$/.test(s) ? Number(s.slice(2)) : null);
const pad = (n: number | string) => String(n).padStart(2, '0');

export function scheduleWords(expr: string, timezone: string, locale: ScheduleLocale, at: number = Date.now()): string | null {
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
    const shifted = shiftTimeOfDay(Number(hour) * 3600 + Number(min) * 60 + Number(sec), timezone, SCHEDULE_DISPLAY_ZONE, at);
    const [h, m, s, shownZone] = shifted === null
      ? [Number(hour), Number(min), Number(sec), zone]
      : [Math.floor(shifted / 3600), Math.floor(shifted / 60) % 60, shifted % 60, ZONE[SCHEDULE_DISPLAY_ZONE]![locale]];
    const time = `${pad(h)}:${pad(m)}${s === 0 ? '' : `:${pad(s)}`}`;
    return ru ? `ежедневно в ${time} ${shownZone}` : `daily at ${time} ${shownZone}`;
  }
  return null;
}
