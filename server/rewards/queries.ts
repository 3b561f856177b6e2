import { and, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { tenantScope, type Actor } from '../auth/actor';
import type { DbOrTx } from '../platform/db';
import { AppError } from '../platform/errors';
import { accruals, ACCRUAL_STATUSES } from './schema';

/** Read side of rewards. An agent reads its own accruals; a developer manager its tenant's totals per agent. */

export const myAccrualsInput = z.strictObject({
  status: z.enum(ACCRUAL_STATUSES).optional(),
  page: z.number().int().min(1).max(100_000).default(1),
  pageSize: z.number().int().min(1).max(100).default(25),
}).optional();

const forbidden = () => new AppError('REWARDS_FORBIDDEN', 'FORBIDDEN', 'Your role does not allow this');

/** The agent's own accruals (its user id, in its tenant), newest first, with the sums per status. */
export async function myAccruals(db: DbOrTx, actor: Actor, raw: z.input<typeof myAccrualsInput>) {
  if (actor.role !== 'agent') throw forbidden();
  const input = myAccrualsInput.parse(raw) ?? { page: 1, pageSize: 25 };
  const tenant = tenantScope(actor); // an agent without a tenant is refused, never widened
  const mine = and(eq(accruals.agentId, actor.userId), tenant === null ? undefined : eq(accruals.tenantId, tenant));
  const where = and(mine, input.status ? eq(accruals.status, input.status) : undefined);
  const [items, sums] = await Promise.all([
    db.select({
      id: accruals.id, bookingId: accruals.bookingId, dealId: accruals.dealId, propertyObjectId: accruals.propertyObjectId,
      ruleKind: accruals.ruleKind, ruleValue: accruals.ruleValue, price: accruals.price, amount: accruals.amount, status: accruals.status,
      paidAt: accruals.paidAt, payableAt: accruals.payableAt, voidedAt: accruals.voidedAt, voidReason: accruals.voidReason,
    }).from(accruals).where(where).orderBy(desc(accruals.paidAt), desc(accruals.id))
      .limit(input.pageSize).offset((input.page - 1) * input.pageSize),
    db.select({ status: accruals.status, n: sql<number>`count(*)::int`, amount: sql<string>`coalesce(sum(${accruals.amount}), 0)::text` })
      .from(accruals).where(mine).groupBy(accruals.status),
  ]);
  return { items, totals: totalsOf(sums), page: input.page, pageSize: input.pageSize };
}

type Sums = { accrued: number; payable: number; void: number; count: number };
function totalsOf(rows: { status: string; n: number; amount: string }[]): Sums {
  const t: Sums = { accrued: 0, payable: 0, void: 0, count: 0 };
  for (const r of rows) {
    t[r.status as 'accrued' | 'payable' | 'void'] = Number(r.amount);
    t.count += r.n;
  }
  return t;
}

/** Sums per agent and status in the actor's tenant scope (developer manager: its tenant; PIN manager: all). */
export async function totalsByAgent(db: DbOrTx, actor: Actor) {
  if (actor.role !== 'developer_manager' && actor.role !== 'pin_manager') throw forbidden();
  const tenant = tenantScope(actor);
  const rows = await db
    .select({ agentId: accruals.agentId, tenantId: accruals.tenantId, status: accruals.status, n: sql<number>`count(*)::int`, amount: sql<string>`sum(${accruals.amount})::text` })
    .from(accruals)
    .where(tenant === null ? undefined : eq(accruals.tenantId, tenant))
    .groupBy(accruals.agentId, accruals.tenantId, accruals.status);
  const byAgent = new Map<string, { agentId: string | null; tenantId: string } & Sums>();
  for (const r of rows) {
    const key = `${r.tenantId}:${r.agentId ?? ''}`;
    const t = byAgent.get(key) ?? { agentId: r.agentId, tenantId: r.tenantId, accrued: 0, payable: 0, void: 0, count: 0 };
    t[r.status] = Number(r.amount);
    t.count += r.n;
    byAgent.set(key, t);
  }
  return [...byAgent.values()].sort((a, b) => b.accrued + b.payable - (a.accrued + a.payable));
}
