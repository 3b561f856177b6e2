import Link from 'next/link';
import { getTranslations } from 'next-intl/server';

export default async function NotFound() {
  const t = await getTranslations('notFound');
  return (
    <main className="login-page">
      <div className="login-card">
        <h1>{t('title')}</h1>
        <p className="muted">{t('text')}</p>
        <Link href="/chessboard">{t('back')}</Link>
      </div>
    </main>
  );
}
