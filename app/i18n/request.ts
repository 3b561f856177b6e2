import { cookies } from 'next/headers';
import { getRequestConfig } from 'next-intl/server';
import { LOCALE_COOKIE, resolveLocale } from './config';

/** next-intl request config (next.config.mjs points here): locale from the NEXT_LOCALE cookie. */
export default getRequestConfig(async () => {
  const locale = resolveLocale((await cookies()).get(LOCALE_COOKIE)?.value);
  const messages = (await import(`./messages/${locale}.json`)).default;
  return { locale, messages };
});
