import { sql, type SQL } from 'drizzle-orm';

/**
 * Helpers of the ops dashboard's read side (hold-queries, messaging-queries, job-queries). A read-only ops
 * view, so it may join across schemas (DESIGN.md); it writes nothing. Every figure takes an explicit `now`
 * (tests pass it; procedures pass the request time) and, where rows belong to a tenant, a tenant scope
 * (null = all tenants: ops, PIN manager).
 */

export type TenantScope = string | null;

export const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`;
export const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));
export const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
export const tenantFilter = (column: SQL, scope: TenantScope): SQL => (scope === null ? sql`TRUE` : sql`${column} = ${scope}`);
