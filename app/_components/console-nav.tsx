'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useTranslations } from 'next-intl';

const ITEMS = [
  { href: '/chessboard', key: 'chessboard' },
  { href: '/bookings', key: 'bookings' },
  { href: '/ops', key: 'ops' },
] as const;

export function ConsoleNav() {
  const pathname = usePathname();
  const t = useTranslations('nav');
  return (
    <nav className="shell-nav" aria-label={t('label')}>
      {ITEMS.map((item) => {
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
