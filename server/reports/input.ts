import { z } from 'zod';
import type { Actor } from '../auth/actor';
import { AppError } from '../platform/errors';

/**
 * The period and filters of every report (tRPC `reports.funnel` and the CSV route share them). A report
 * covers at most REPORT_MAX_DAYS: a longer one would be a scan nobody reads and outside the read budget.
 */
export const REPORT_MAX_DAYS = 366;
const DAY_MS = 86_400_000;
// dates a booking console can hold: keeps nonsense years out of the SQL (PostgreSQL would refuse year 20000)
const EARLIEST = Date.UTC(2000, 0, 1);
const LATEST = Date.UTC(2200, 0, 1);

/** an instant: a Date (tRPC, superjson) or an ISO date-time with its offset (a URL) */
const instant = z
  .union([z.date(), z.iso.datetime({ offset: true })])
  .transform((v) => new Date(v))
  .refine((d) => !Number.isNaN(d.getTime()) && d.getTime() >= EARLIEST && d.getTime() <= LATEST, 'a date between 2000 and 2200');

const bothDates = (v: { from: unknown; to: unknown }): v is { from: Date; to: Date } => v.from instanceof Date && v.to instanceof Date;

export const reportInput = z
  .strictObject({
    /** start of the period, inclusive */
    from: instant,
    /** end of the period, exclusive */
    to: instant,
    projectId: z.uuid().optional(),
    /** PIN managers: the tenant to report on (all tenants without it); a tenant's own users need none */
    tenantId: z.uuid().optional(),
  })
  // zod runs these even when a field failed (then `from` / `to` may be anything): such a field already has its error
  .refine((v) => !bothDates(v) || v.from.getTime() < v.to.getTime(), { path: ['to'], message: 'must be after from' })
  .refine((v) => !bothDates(v) || v.to.getTime() - v.from.getTime() <= REPORT_MAX_DAYS * DAY_MS, {
    path: ['to'],
    message: `the period is at most ${REPORT_MAX_DAYS} days`,
  });
export type ReportInput = z.infer<typeof reportInput>;

/** who may read reports: a tenant's developer managers (their tenant) and PIN managers (any tenant) */
export const REPORT_ROLES = ['developer_manager', 'pin_manager'] as const;

/**
 * The tenant predicate of a report. `own` is the caller's tenant (null: cross-tenant role), `requested`
 * the tenant asked for. A developer manager asking for another tenant gets an empty report, exactly as
 * the other reads answer a foreign filter: the scope is never widened.
 */
export interface ReportScope {
  own: string | null;
  requested: string | null;
}

export function reportScope(actor: Actor, input: Pick<ReportInput, 'tenantId'>): ReportScope {
  if (!(REPORT_ROLES as readonly string[]).includes(actor.role)) {
    throw new AppError('REPORTS_FORBIDDEN', 'FORBIDDEN', 'Reports are for developer managers and PIN managers');
  }
  if (actor.role === 'pin_manager') return { own: null, requested: input.tenantId ?? null };
  if (!actor.tenantId) throw new AppError('AUTH_TENANT_SCOPE_MISSING', 'FORBIDDEN', 'Your account has no tenant');
  return { own: actor.tenantId, requested: input.tenantId ?? null };
}
