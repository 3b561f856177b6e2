import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { getTranslations } from 'next-intl/server';
import { resolveSession, SESSION_COOKIE } from '@/server/auth/session';
import { getServices } from '@/server/main/web-services';
import { LoginForm } from '../_components/login-form';
import { LocaleSwitch } from '../_components/locale-switch';

export const dynamic = 'force-dynamic';

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ error?: string }> }) {
  const token = (await cookies()).get(SESSION_COOKIE)?.value;
  if (token && (await resolveSession(getServices().database.db, token))) redirect('/chessboard');
  const t = await getTranslations('login');
  const te = await getTranslations('errors');
  const code = (await searchParams).error;
  const initialError = code ? (te.has(`domain.${code}`) ? te(`domain.${code}`) : te('generic')) : null;
  return (
    <main className="login-page">
      <div className="login-card">
        <div className="login-head">
          <h1>{t('title')}</h1>
          <LocaleSwitch />
        </div>
        <p className="muted">{t('subtitle')}</p>
        <LoginForm initialError={initialError} />
      </div>
    </main>
  );
}
