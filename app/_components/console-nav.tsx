'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useTranslations } from 'next-intl';
import { useSessionUser } from './session';

const ITEMS = [
  { href: '/chessboard', key: 'chessboard' },
  { href: '/bookings', key: 'bookings' },
  // only the roles the ops pages serve (the ops layout answers the others with its no-access notice)
  { href: '/ops', key: 'ops', roles: ['ops', 'pin_manager', 'viewer'] },
] as const;

export function ConsoleNav() {
  const pathname = usePathname();
  const t = useTranslations('nav');
  const { role } = useSessionUser();
  return (
    <nav className="shell-nav" aria-label={t('label')}>
      {ITEMS.filter((item) => !('roles' in item) || (item.roles as readonly string[]).includes(role)).map((item) => {
        const active = pathname === item.href || pathname.startsWith(`${item.href}/`);
        return (
          <Link key={item.href} href={item.href} className={`nav-link${active ? ' nav-link-active' : ''}`} aria-current={active ? 'page' : undefined}>
            {t(item.key)}
          </Link>
        );
      })}
    </nav>
  );
}
