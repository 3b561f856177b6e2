'use client';
import { useLocale, useTranslations } from 'next-intl';
import { useRouter } from 'next/navigation';
import { useTransition } from 'react';
import { LOCALE_COOKIE, LOCALES } from '../i18n/config';

/** ru/en toggle: writes the NEXT_LOCALE cookie and re-renders the server components with the new dictionary. */
export function LocaleSwitch() {
  const locale = useLocale();
  const t = useTranslations('locale');
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  return (
    <div className="locale-switch" role="group" aria-label={t('label')}>
      {LOCALES.map((l) => (
        <button
          key={l}
          type="button"
          className={`btn btn-small${l === locale ? ' btn-pressed' : ''}`}
          aria-pressed={l === locale}
          lang={l}
          disabled={pending}
          onClick={() => {
            if (l === locale) return;
            document.cookie = `${LOCALE_COOKIE}=${l}; Path=/; Max-Age=31536000; SameSite=Lax`;
            startTransition(() => router.refresh());
          }}
        >
          {t(l)}
        </button>
      ))}
    </div>
  );
}
