/**
 * A countdown's remaining (or overdue) time in words with units: "49 мин 18 с",
 * "21 ч 54 мин", "2 д 3 ч", "18 с" — never the ambiguous "49:18" vs "21:54:18". Two units at most:
 * the larger ones matter, seconds only while under an hour. The sign is the caller's business (it
 * says "осталось" or "просрочено на"); this takes the absolute value.
 */
export type DurationLocale = 'ru' | 'en';

const UNITS: Record<DurationLocale, { d: string; h: string; m: string; s: string }> = {
  ru: { d: 'д', h: 'ч', m: 'мин', s: 'с' },
  en: { d: 'd', h: 'h', m: 'min', s: 's' },
};

export function durationWords(ms: number, locale: DurationLocale): string {
  const u = UNITS[locale];
  const total = Math.floor(Math.abs(ms) / 1000);
  const d = Math.floor(total / 86_400);
  const h = Math.floor((total % 86_400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const two = (a: number, ua: string, b: number, ub: string) => (b > 0 ? `${a} ${ua} ${b} ${ub}` : `${a} ${ua}`);
  if (d > 0) return two(d, u.d, h, u.h);
  if (h > 0) return two(h, u.h, m, u.m);
  if (m > 0) return two(m, u.m, s, u.s);
  return `${s} ${u.s}`;
}
