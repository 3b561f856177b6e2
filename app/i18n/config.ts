/** Locale of the console: a cookie, never a URL segment. ru is the default, en the alternative. */
export const LOCALES = ['ru', 'en'] as const;
export type AppLocale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: AppLocale = 'ru';
export const LOCALE_COOKIE = 'NEXT_LOCALE';

export function resolveLocale(value: string | undefined | null): AppLocale {
  return (LOCALES as readonly string[]).includes(value ?? '') ? (value as AppLocale) : DEFAULT_LOCALE;
}

/** "en-GB,en;q=0.9,ru;q=0.8" → en: the supported language with the highest q (ties: the first listed). */
export function localeFromAcceptLanguage(header: string | null | undefined): AppLocale {
  let best: { locale: AppLocale; q: number } | null = null;
  for (const part of (header ?? '').split(',')) {
    const [tag, ...params] = part.trim().split(';');
    const lang = tag.trim().toLowerCase().split('-')[0];
    if (!(LOCALES as readonly string[]).includes(lang)) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (Number.isFinite(q) && q > 0 && (!best || q > best.q)) best = { locale: lang as AppLocale, q };
  }
  return best?.locale ?? DEFAULT_LOCALE;
}
