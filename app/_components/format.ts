'use client';
import { useLocale } from 'next-intl';
import { useMemo } from 'react';

/**
 * Locale-aware formatting with Intl. Times are shown in the browser's (the user's) time zone; the UTC
 * value goes into the `title` so it shows on hover. Money is RUB: "5,600,000 ₽" / "5 600 000 ₽", compact
 * "5.6M ₽" / "5,6 млн ₽". Every screen formats through here, so lists and the timeline agree.
 */
export function makeFormat(locale: string): Format {
  // Intl constructors cost tens of µs each: one set per locale for the whole page (every countdown of
  // a 1,000-cell grid asks for it; one set per component would multiply the grid's render time)
  let format = formats.get(locale);
  if (!format) formats.set(locale, (format = buildFormat(locale)));
  return format;
}

const formats = new Map<string, Format>();

/** An Intl formatter made on its first use: a page pays only for the formats it shows (the first
 * Intl object of a page loads the locale's ICU data, 70–170 ms in the grid's profile; each one after
 * costs tens of µs), so the shell's first render makes only the formats it shows. */
function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

function buildFormat(locale: string) {
  const tag = locale === 'en' ? 'en-US' : 'ru-RU';
  // one money format per locale everywhere: digits grouped as the locale does, then " ₽" (en-US's
  // currency style wrote "RUB 5,600,000" next to the grid's "5.6M ₽")
  const money = lazy(() => new Intl.NumberFormat(tag, { maximumFractionDigits: 0 }));
  const compactMoney = lazy(() => new Intl.NumberFormat(tag, { notation: 'compact', maximumFractionDigits: 2 }));
  const number1 = lazy(() => new Intl.NumberFormat(tag, { maximumFractionDigits: 1 }));
  const integer = lazy(() => new Intl.NumberFormat(tag));
  // one date format per locale ("Dec 1, 2026, 18:25" / "1 дек. 2026 г., 18:25"); with seconds it is the
  // same pattern plus :ss (the timeline said "11/29/26, 6:25:41 PM" while lists said "Dec 1, 2026")
  const dateParts = { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } as const;
  const dateTime = lazy(() => new Intl.DateTimeFormat(tag, dateParts));
  const dateTimeSeconds = lazy(() => new Intl.DateTimeFormat(tag, { ...dateParts, second: '2-digit' }));
  const timeOnly = lazy(() => new Intl.DateTimeFormat(tag, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }));
  const preciseTime = lazy(() => new Intl.DateTimeFormat(tag, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hourCycle: 'h23' }));
  return {
    locale,
    money: (n: number) => `${money().format(n)} ₽`,
    compactMoney: (n: number) => compactMoney().format(n),
    area: (n: number) => number1().format(n),
    integer: (n: number) => integer().format(n),
    dateTime: (d: Date) => dateTime().format(d),
    dateTimeSeconds: (d: Date) => dateTimeSeconds().format(d),
    time: (d: Date) => timeOnly().format(d),
    /** the same pattern without the year, to the millisecond — for saga hops that happen within one second */
    precise: (d: Date) => preciseTime().format(d),
    utc: (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 23)} UTC`,
    /** ms → "250 ms" / "1.2 s" / "3 min 4 s" / "2 h 5 min" (units from the dictionary) */
    duration: (ms: number, u: { ms: string; s: string; min: string; h: string; d: string }) => {
      const abs = Math.abs(ms);
      const sign = ms < 0 ? '−' : '';
      if (abs < 1000) return `${sign}${integer().format(Math.round(abs))} ${u.ms}`;
      if (abs < 60_000) return `${sign}${number1().format(abs / 1000)} ${u.s}`;
      if (abs < 3600_000) return `${sign}${Math.floor(abs / 60_000)} ${u.min} ${Math.floor((abs % 60_000) / 1000)} ${u.s}`;
      if (abs < 86_400_000) return `${sign}${Math.floor(abs / 3600_000)} ${u.h} ${Math.floor((abs % 3600_000) / 60_000)} ${u.min}`;
      return `${sign}${Math.floor(abs / 86_400_000)} ${u.d} ${Math.floor((abs % 86_400_000) / 3600_000)} ${u.h}`;
    },
  };
}

export type Format = ReturnType<typeof buildFormat>;

export function useFormat(): Format {
  const locale = useLocale();
  return useMemo(() => makeFormat(locale), [locale]);
}

/** Countdown text: "1d 02:03:04", "02:03:04", "03:04"; negative = overdue. */
export function countdownText(ms: number, dayUnit: string): string {
  const abs = Math.abs(ms);
  const total = Math.floor(abs / 1000);
  const d = Math.floor(total / 86_400);
  const h = Math.floor((total % 86_400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  const body = d > 0 ? `${d}${dayUnit} ${pad(h)}:${pad(m)}:${pad(s)}` : h > 0 ? `${pad(h)}:${pad(m)}:${pad(s)}` : `${pad(m)}:${pad(s)}`;
  return ms < 0 ? `−${body}` : body;
}
