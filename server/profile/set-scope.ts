import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Actor } from '../auth/actor';
import { requisiteSets } from './schema';

// server-only (a drizzle predicate): permissions.ts is shared with client components and must not import a schema

/**
 * permissions.ts canUseRequisiteSet as a WHERE predicate: a query (and its row lock) never reaches a set the actor may
 * not use, so a foreign or another agent's set is neither locked nor told apart from a missing one.
 */
export function usableRequisiteSets(actor: Actor): SQL | undefined {
  switch (actor.role) {
    case 'pin_manager':
    case 'system':
      return undefined;
    case 'developer_manager':
      return actor.tenantId ? eq(requisiteSets.tenantId, actor.tenantId) : sql`false`;
    case 'agent':
      return actor.tenantId ? and(eq(requisiteSets.tenantId, actor.tenantId), eq(requisiteSets.createdBy, actor.userId)) : sql`false`;
    default:
      return sql`false`;
  }
}
