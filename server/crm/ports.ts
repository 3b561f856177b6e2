import type { Actor } from '../auth/actor';
import type { DbOrTx, Tx } from '../platform/db';
import type { PlatformEnv } from '../platform/env';

/**
 * What crm needs from other contexts, as functions the composition root plugs in at start-up
 * (server/main/registry.ts). profile asks crm which bookings reference a requisite set, so crm cannot
 * import profile back for its own question about a set.
 */

/** profile's verdict on a requisite-set reference: a verdict, never a field of the set. */
export type RequisiteReferenceVerdict = 'ok' | 'not-found' | 'erased';

/**
 * Whether `actor` may reference the set at `version` from a booking of `tenantId` (profile's rule); a
 * usable set is held FOR SHARE until the caller's transaction ends, so an erasure cannot slip in.
 */
export type RequisiteReferenceCheck = (
  tx: Tx, actor: Actor, ref: { tenantId: string; setId: string; version: number },
) => Promise<RequisiteReferenceVerdict>;

let requisiteCheck: RequisiteReferenceCheck | null = null;

export function provideRequisiteReferenceCheck(fn: RequisiteReferenceCheck): void {
  requisiteCheck = fn;
}

export function checkRequisiteReference(...args: Parameters<RequisiteReferenceCheck>): Promise<RequisiteReferenceVerdict> {
  if (!requisiteCheck) throw new Error('crm has no requisite check: the process entry imports server/main/registry.ts');
  return requisiteCheck(...args);
}

/** profile's key settings (its slice of the environment): crm hands the process's env through without reading it. */
type ProfileEnv = Pick<PlatformEnv, 'NODE_ENV'> & { PROFILE_DATA_KEY: string; PROFILE_DATA_KEY_ID: string; PROFILE_DATA_OLD_KEYS: string };

/**
 * profile's answers for the booking search and the deal picker: the ids of the sets `actor` may use
 * whose buyer's surname matches, and the masked buyer name of given sets — never a field in clear.
 */
export interface BuyerNameLookup {
  setIdsMatchingSurname(db: DbOrTx, actor: Actor, env: ProfileEnv, surname: string): Promise<{ ids: string[]; truncated: boolean }>;
  maskedBuyerNames(db: DbOrTx, actor: Actor, env: ProfileEnv, setIds: string[]): Promise<Record<string, string>>;
}

let buyerNames: BuyerNameLookup | null = null;

export function provideBuyerNameLookup(lookup: BuyerNameLookup): void {
  buyerNames = lookup;
}

export function buyerNameLookup(): BuyerNameLookup {
  if (!buyerNames) throw new Error('crm has no buyer name lookup: the process entry imports server/main/registry.ts');
  return buyerNames;
}
