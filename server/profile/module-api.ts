import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import type { Actor } from '../auth/actor';
import type { DbOrTx, Tx } from '../platform/db';
import type { ProfileKeyEnv } from './env';
import { decryptFields, keyringFromEnv } from './crypto';
import { maskRequisites, type RequisiteFields } from './requisites';
import { requisiteSets, requisiteSetVersions } from './schema';
import { usableRequisiteSets } from './set-scope';

/**
 * profile's module API for crm: crm reads no profile table and holds no personal data, only a
 * reference (set id + version). The answer is a verdict, never a field.
 */
export type RequisiteReferenceVerdict = 'ok' | 'not-found' | 'erased';
// crm receives checkRequisiteReference through its port (crm/ports.ts), wired by server/main/registry.ts

/**
 * Whether `actor` may reference `setId` at `version` from a booking of `tenantId`: the set is in that
 * tenant, the actor may use it (permissions.ts canUseRequisiteSet — the rule reveal applies too) and it
 * still has its fields. A foreign set, or one the actor may not use, answers not-found like a missing one
 * and is not locked: the predicate is in the WHERE, so FOR SHARE reaches only a usable row. A usable set
 * is held FOR SHARE until the caller's transaction ends, so an erasure (FOR UPDATE, commands.ts) waits for
 * the booking that references the set to commit, then sees it.
 */
export async function checkRequisiteReference(tx: Tx, actor: Actor, ref: { tenantId: string; setId: string; version: number }): Promise<RequisiteReferenceVerdict> {
  const [set] = await tx
    .select({ erasedAt: requisiteSets.erasedAt })
    .from(requisiteSets)
    .where(and(eq(requisiteSets.id, ref.setId), eq(requisiteSets.tenantId, ref.tenantId), usableRequisiteSets(actor)))
    .for('share');
  if (!set) return 'not-found';
  if (set.erasedAt) return 'erased';
  const [version] = await tx
    .select({ version: requisiteSetVersions.version })
    .from(requisiteSetVersions)
    .where(and(eq(requisiteSetVersions.setId, ref.setId), eq(requisiteSetVersions.version, ref.version)));
  return version ? 'ok' : 'not-found';
}

/** At most this many of the newest sets are read to match a surname (a larger tenant is cut, and says so). */
export const SURNAME_SCAN_LIMIT = 2000;

const normalName = (s: string) => s.trim().toLocaleLowerCase('ru').replace(/ё/g, 'е');

/**
 * Ids of the requisite sets the actor may use (the rule reveal applies) whose buyer's surname is
 * `surname` (whole word, case- and ё-insensitive) — for crm's bookings search. The data is encrypted,
 * so the newest SURNAME_SCAN_LIMIT usable sets are decrypted here and compared; nothing of them leaves
 * this function but the ids, and no reveal is recorded because nothing is shown.
 */
export async function requisiteSetIdsMatchingSurname(db: DbOrTx, actor: Actor, env: ProfileKeyEnv, surname: string): Promise<{ ids: string[]; truncated: boolean }> {
  const wanted = normalName(surname);
  if (!wanted) return { ids: [], truncated: false };
  const keyring = keyringFromEnv(env);
  const rows = await db
    .select({ id: requisiteSets.id, version: requisiteSets.currentVersion, ciphertext: requisiteSetVersions.ciphertext, keyId: requisiteSetVersions.keyId })
    .from(requisiteSets)
    .innerJoin(requisiteSetVersions, and(eq(requisiteSetVersions.setId, requisiteSets.id), eq(requisiteSetVersions.version, requisiteSets.currentVersion)))
    .where(and(usableRequisiteSets(actor), isNull(requisiteSets.erasedAt)))
    .orderBy(desc(requisiteSets.createdAt))
    .limit(SURNAME_SCAN_LIMIT + 1);
  const ids: string[] = [];
  for (const r of rows.slice(0, SURNAME_SCAN_LIMIT)) {
    if (!r.ciphertext || !r.keyId) continue;
    let fields: RequisiteFields;
    try {
      fields = decryptFields(keyring, r.id, r.version, { ciphertext: r.ciphertext, keyId: r.keyId }) as RequisiteFields;
    } catch {
      continue; // a set under a retired key nobody configured cannot match; the search still answers
    }
    const [last = ''] = fields.fullName.split(/\s+/);
    if (normalName(last) === wanted) ids.push(r.id);
  }
  return { ids, truncated: rows.length > SURNAME_SCAN_LIMIT };
}

/**
 * The masked buyer name ("И••••• И. П.", what the requisite lists show) of each given set the actor may
 * use; a set it may not use, an erased or unreadable one is absent. Nothing full leaves profile.
 */
export async function maskedBuyerNames(db: DbOrTx, actor: Actor, env: ProfileKeyEnv, setIds: string[]): Promise<Record<string, string>> {
  if (setIds.length === 0) return {};
  const keyring = keyringFromEnv(env);
  const rows = await db
    .select({ id: requisiteSets.id, version: requisiteSets.currentVersion, ciphertext: requisiteSetVersions.ciphertext, keyId: requisiteSetVersions.keyId })
    .from(requisiteSets)
    .innerJoin(requisiteSetVersions, and(eq(requisiteSetVersions.setId, requisiteSets.id), eq(requisiteSetVersions.version, requisiteSets.currentVersion)))
    .where(and(inArray(requisiteSets.id, setIds), usableRequisiteSets(actor), isNull(requisiteSets.erasedAt)));
  const out: Record<string, string> = {};
  for (const r of rows) {
    if (!r.ciphertext || !r.keyId) continue;
    try {
      out[r.id] = maskRequisites(decryptFields(keyring, r.id, r.version, { ciphertext: r.ciphertext, keyId: r.keyId }) as RequisiteFields).name;
    } catch {
      // unreadable (a retired key nobody configured): the deal shows no buyer rather than failing the list
    }
  }
  return out;
}
