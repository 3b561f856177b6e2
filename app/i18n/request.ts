import { cookies, headers } from 'next/headers';
import { getRequestConfig } from 'next-intl/server';
import { LOCALE_COOKIE, localeFromAcceptLanguage, resolveLocale } from './config';

/**
 * next-intl request config (next.config.mjs points here): the NEXT_LOCALE cookie (the user's choice)
 * wins; without it (first visit) the browser's Accept-Language picks ru or en.
 */
export default getRequestConfig(async () => {
  const cookie = (await cookies()).get(LOCALE_COOKIE)?.value;
  const locale = cookie ? resolveLocale(cookie) : localeFromAcceptLanguage((await headers()).get('accept-language'));
  const messages = (await import(`./messages/${locale}.json`)).default;
  return { locale, messages };
});
