'use client';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useFormat } from '@/app/_components/format';
import { useSessionUser } from '@/app/_components/session';
import { STATUS_GLYPH, type ObjectStatus } from '@/app/_components/status';
import { useTRPC } from '@/app/_components/trpc';

/** Live figures: every ops query polls (≤ 5 s) while the page is open. */
export const LIVE = { refetchInterval: 5_000, refetchIntervalInBackground: false } as const;

const READ_ROLES = ['ops', 'pin_manager', 'viewer'];

/** Who may see and act (the server checks again; hiding a button is a courtesy, not the guard). */
export function useOpsAccess() {
  const user = useSessionUser();
  return { canRead: READ_ROLES.includes(user.role), canAct: user.role === 'ops', role: user.role };
}

export function useInvalidateOps() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => Promise.all([queryClient.invalidateQueries(trpc.ops.pathFilter()), queryClient.invalidateQueries(trpc.catalog.pathFilter())]);
}

/** "3 min 4 s" etc. with the dictionary's units. */
export function useDuration() {
  const f = useFormat();
  const t = useTranslations('ops.units');
  const units = { ms: t('ms'), s: t('s'), min: t('min'), h: t('h'), d: t('d') };
  // "10 min 0 s" reads better as "10 min"
  const zero = new RegExp(` 0 (${[units.s, units.min, units.h].map((u) => u.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`);
  return (ms: number | null | undefined) => (ms === null || ms === undefined ? '—' : f.duration(ms, units).replace(zero, ''));
}

const TABS = [
  { href: '/ops', key: 'overview' },
  { href: '/ops/holds', key: 'holds' },
  { href: '/ops/jobs', key: 'jobs' },
  { href: '/ops/messaging', key: 'messaging' },
  { href: '/ops/catalog', key: 'catalog' },
  { href: '/ops/reconciliation', key: 'reconciliation' },
  // who viewed buyers' requisites: ops and PIN managers only (profile.reveals), not the viewer
  { href: '/ops/reveals', key: 'reveals', roles: ['ops', 'pin_manager'] },
] as const satisfies readonly { href: string; key: string; roles?: readonly string[] }[];

/** The section tabs and the access notice; the pages render only for roles that may read. */
export function OpsShell({ children }: { children: React.ReactNode }) {
  const t = useTranslations('ops');
  const pathname = usePathname();
  const { canRead, canAct, role } = useOpsAccess();
  if (!canRead) {
    return <p className="notice notice-warning" role="alert" data-testid="ops-no-access">{t('noAccess')}</p>;
  }
  return (
    <>
      <nav className="ops-tabs" aria-label={t('tabs.label')}>
        {TABS.filter((tab) => !('roles' in tab) || (tab.roles as readonly string[]).includes(role)).map((tab) => {
          const active = tab.href === '/ops' ? pathname === '/ops' : pathname.startsWith(tab.href);
          return (
            <Link key={tab.href} href={tab.href} className={`ops-tab${active ? ' ops-tab-active' : ''}`} aria-current={active ? 'page' : undefined}>
              {t(`tabs.${tab.key}`)}
            </Link>
          );
        })}
        {!canAct ? <span className="ops-readonly" data-testid="ops-read-only">{t('readOnly')}</span> : null}
      </nav>
      {children}
    </>
  );
}

/** When the figures were taken, and whether a refresh is under way. */
export function Freshness({ asOf, fetching }: { asOf: Date | undefined; fetching: boolean }) {
  const t = useTranslations('ops');
  const f = useFormat();
  if (!asOf) return null;
  return (
    <span className="muted small ops-freshness" aria-live="off">
      {t('updated', { time: f.time(asOf) })}{fetching ? ` · ${t('refreshing')}` : ''}
    </span>
  );
}

export function ObjectStatusBadge({ status }: { status: string }) {
  const t = useTranslations('status');
  const known = status in STATUS_GLYPH;
  return (
    <span className={`badge status-badge status-${status}`}>
      {known ? <span aria-hidden="true">{STATUS_GLYPH[status as ObjectStatus]} </span> : null}
      {known ? t(status as ObjectStatus) : status}
    </span>
  );
}

export function BookingStatusBadge({ status }: { status: string }) {
  const t = useTranslations('booking.status');
  return <span className={`badge booking-${status}`}>{t.has(status) ? t(status) : status}</span>;
}

/** Job run status with a glyph, never colour alone. */
export function RunStatusBadge({ status }: { status: string | null | undefined }) {
  const t = useTranslations('ops.runStatus');
  if (!status) return <span className="muted">—</span>;
  const glyph = { succeeded: '✓', failed: '✕', skipped: '↷', running: '…' }[status] ?? '';
  return <span className={`badge run-${status}`}><span aria-hidden="true">{glyph} </span>{t.has(status) ? t(status) : status}</span>;
}

/** First 8 characters of a uuid, full value on hover. */
export function ShortId({ id, href }: { id: string | null | undefined; href?: string }) {
  if (!id) return <span className="muted">—</span>;
  const body = <span className="mono" title={id}>{id.slice(0, 8)}</span>;
  return href ? <Link href={href}>{body}</Link> : body;
}

export function objectHref(o: { projectId: string | null; buildingId: string | null; propertyObjectId: string }): string | undefined {
  return o.projectId && o.buildingId ? `/chessboard?project=${o.projectId}&building=${o.buildingId}&object=${o.propertyObjectId}` : undefined;
}

/** A deal has no page of its own: the bookings list filtered by it. */
export const dealHref = (dealId: string) => `/bookings?q=${dealId}`;
