/** Locale of the console: a cookie, never a URL segment. ru is the default, en the alternative. */
export const LOCALES = ['ru', 'en'] as const;
export type AppLocale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: AppLocale = 'ru';
export const LOCALE_COOKIE = 'NEXT_LOCALE';

export function resolveLocale(value: string | undefined | null): AppLocale {
  return (LOCALES as readonly string[]).includes(value ?? '') ? (value as AppLocale) : DEFAULT_LOCALE;
}
