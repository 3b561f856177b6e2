import { and, eq, ilike, isNull, or } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { tenantScope, type Actor } from './actor';
import { users } from './schema';

/** At most this many people narrow a list of another context by name (a broader word is cut). */
export const NAME_MATCH_LIMIT = 200;

/** `%` and `_` typed by a user are literal characters, not LIKE wildcards */
const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Ids of the people (in the actor's tenant scope: its tenant's users and PIN staff; cross-tenant roles
 * everyone) whose display name contains `text` — what another context's list filters by, e.g. the
 * bookings of the deals of "Иванов". An investor looks up nobody.
 */
export async function userIdsMatchingName(db: DbOrTx, actor: Actor, text: string): Promise<string[]> {
  if (actor.role === 'investor') return [];
  const scope = tenantScope(actor);
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(
      ilike(users.displayName, `%${likeEscape(text)}%`),
      scope === null ? undefined : or(eq(users.tenantId, scope), isNull(users.tenantId)),
    ))
    .limit(NAME_MATCH_LIMIT);
  return rows.map((r) => r.id);
}
