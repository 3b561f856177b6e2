'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useTranslations } from 'next-intl';
import { useId, useState } from 'react';
import { useSessionUser } from './session';

const ITEMS = [
  // an investor starts from its deals; the chessboard shows the projects of their developers
  { href: '/deals', key: 'myDeals', roles: ['investor'] },
  { href: '/chessboard', key: 'chessboard' },
  { href: '/bookings', key: 'bookings' },
  // the people who run sales: a tenant's developer managers and PIN managers (reports.funnel's roles)
  { href: '/reports', key: 'reports', roles: ['developer_manager', 'pin_manager'] },
  { href: '/rewards', key: 'rewards', roles: ['agent', 'developer_manager', 'pin_manager'] },
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
        // no prefetch: every console page is rendered per request, so a prefetch in view renders each
        // page of the menu on the server while the board is still loading, for pages rarely opened next
        return (
          <Link key={item.href} href={item.href} prefetch={false} className={`nav-link${active ? ' nav-link-active' : ''}`} aria-current={active ? 'page' : undefined}>
            {t(item.key)}
          </Link>
        );
      })}
    </nav>
  );
}

/**
 * The header's nav and user block. On a phone (≤ 760 px, globals.css) they fold behind a "Menu"
 * button so user, language and sign-out stay reachable; on a desktop the wrapper is display: contents.
 */
export function ShellMenu({ children }: { children: React.ReactNode }) {
  const t = useTranslations('nav');
  const pathname = usePathname();
  // open for the page it was opened on: navigating closes it (no effect needed)
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  const id = useId();
  return (
    <>
      <button type="button" className="btn btn-small menu-toggle" aria-expanded={open} aria-controls={id} onClick={() => setOpenOn(open ? null : pathname)} data-testid="menu-toggle">
        <span aria-hidden="true">☰ </span>{t('menu')}
      </button>
      <div className="shell-menu" id={id} data-open={open ? 'true' : 'false'}>
        {children}
      </div>
    </>
  );
}

/**
 * The first tab stop of every page. On the chessboard it goes straight to the grid's cell (24 Tabs
 * before); elsewhere to the page's main content.
 */
export function SkipLink() {
  const t = useTranslations('nav');
  const pathname = usePathname();
  const toGrid = pathname === '/chessboard';
  return (
    <a
      className="skip-link"
      href="#main"
      onClick={(e) => {
        const target = toGrid
          ? document.querySelector<HTMLElement>('.chess-grid [role=gridcell][tabindex="0"]')
          : document.getElementById('main');
        if (!target) return;
        e.preventDefault();
        target.focus();
        target.scrollIntoView({ block: 'nearest' });
      }}
    >
      {toGrid ? t('skipToGrid') : t('skipToContent')}
    </a>
  );
}
