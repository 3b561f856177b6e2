import { NextIntlClientProvider } from 'next-intl';
import { getTranslations } from 'next-intl/server';
import { OpsShell } from './_components/common';
import './ops.css';

/** The operations dashboard: one heading, section tabs, and the pages (ops, PIN manager, viewer). */
export default async function OpsLayout({ children }: { children: React.ReactNode }) {
  const t = await getTranslations('ops');
  return (
    // every namespace, the ops pages' own too (the root layout's provider leaves that one out)
    <NextIntlClientProvider>
      <section className="page ops">
        <h1 className="page-title">{t('title')}</h1>
        <OpsShell>{children}</OpsShell>
      </section>
    </NextIntlClientProvider>
  );
}
