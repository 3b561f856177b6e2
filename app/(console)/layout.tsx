import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { getTranslations } from 'next-intl/server';
import { resolveSession, SESSION_COOKIE } from '@/server/auth/session';
import { loadUserProfile } from '@/server/auth/sign-in';
import { getServices } from '@/server/main/web-services';
import { ConsoleNav, ShellMenu, SkipLink } from '../_components/console-nav';
import { LocaleSwitch } from '../_components/locale-switch';
import { NotificationBell } from '../_components/notification-bell';
import { SessionProvider } from '../_components/session';
import { SignOutButton } from '../_components/sign-out-button';
import { ToastHost } from '../_components/toast';

export const dynamic = 'force-dynamic';

/** Every console page requires a live session, checked here on the server (not only in the API). */
export default async function ConsoleLayout({ children }: { children: React.ReactNode }) {
  const { database } = getServices();
  const session = await resolveSession(database.db, (await cookies()).get(SESSION_COOKIE)?.value);
  if (!session) redirect('/login');
  const user = await loadUserProfile(database.db, session.actor.userId);
  if (!user) redirect('/login');
  const t = await getTranslations();
  return (
    <SessionProvider user={user}>
      <div className="shell">
        <SkipLink />
        <header className="shell-header">
          <a className="brand" href="/chessboard">{t('app.brand')}</a>
          <NotificationBell />
          <ShellMenu>
            <ConsoleNav />
            <div className="shell-user">
              <LocaleSwitch />
              <span className="user-name" data-testid="user-name">{user.displayName}</span>
              <span className="role-badge" data-testid="user-role">{t(`roles.${user.role}`)}</span>
              {user.tenantName ? <span className="muted tenant-name">{user.tenantName}</span> : null}
              <SignOutButton />
            </div>
          </ShellMenu>
        </header>
        <main className="shell-main" id="main" tabIndex={-1}>{children}</main>
        <ToastHost />
      </div>
    </SessionProvider>
  );
}
