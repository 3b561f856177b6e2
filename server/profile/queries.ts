import { and, desc, eq, lt } from 'drizzle-orm';
import { z } from 'zod';
import type { Actor } from '../auth/actor';
import { canSeeTenant } from '../auth/actor';
import { bookingRequisiteReference } from '../crm/requisite-references';
import type { DbOrTx, Tx } from '../platform/db';
import type { ProfileContext } from './commands';
import { decryptFields, type Keyring } from './crypto';
import { profileError } from './errors';
import { authorizeProfile, ownerScope, profileTenantScope } from './permissions';
import { maskRequisites, requisiteFieldsInput, type MaskedRequisites, type RequisiteFields } from './requisites';
import { requisiteReads, requisiteSets, requisiteSetVersions } from './schema';

export const listRequisiteSetsInput = z.strictObject({
  tenantId: z.uuid().optional(),
  /** one set by id (the booking page shows the booking's set) */
  setId: z.uuid().optional(),
  /** createdAt of the last row of the previous page */
  before: z.date().optional(),
  limit: z.number().int().min(1).max(100).default(50),
});
export const revealRequisiteSetInput = z.strictObject({
  setId: z.uuid(),
  /** the booking the set is read for: then the version the booking was made with is read, and the audit names it */
  bookingId: z.uuid().optional(),
  /** a version other than the current one (without bookingId) */
  version: z.number().int().positive().max(1_000_000).optional(),
});

export interface MaskedRequisiteSet {
  id: string;
  tenantId: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  erased: boolean;
  /** null once erased */
  masked: MaskedRequisites | null;
}

const readFields = (keyring: Keyring, setId: string, version: number, stored: { ciphertext: string | null; keyId: string | null }): RequisiteFields | null =>
  stored.ciphertext && stored.keyId ? (decryptFields(keyring, setId, version, { ciphertext: stored.ciphertext, keyId: stored.keyId }) as RequisiteFields) : null;

/** The sets the actor may work with, masked (name initials, passport •••• 1234). Not audited: nothing full is shown. */
export async function listRequisiteSets(db: DbOrTx, actor: Actor, keyring: Keyring, input: z.input<typeof listRequisiteSetsInput>): Promise<MaskedRequisiteSet[]> {
  authorizeProfile(actor, 'profile.list');
  const q = listRequisiteSetsInput.parse(input);
  const scope = profileTenantScope(actor);
  const owner = ownerScope(actor);
  const rows = await db
    .select({
      id: requisiteSets.id, tenantId: requisiteSets.tenantId, version: requisiteSets.currentVersion, createdAt: requisiteSets.createdAt,
      updatedAt: requisiteSets.updatedAt, erasedAt: requisiteSets.erasedAt, ciphertext: requisiteSetVersions.ciphertext, keyId: requisiteSetVersions.keyId,
    })
    .from(requisiteSets)
    .innerJoin(requisiteSetVersions, and(eq(requisiteSetVersions.setId, requisiteSets.id), eq(requisiteSetVersions.version, requisiteSets.currentVersion)))
    .where(and(
      scope === null ? (q.tenantId ? eq(requisiteSets.tenantId, q.tenantId) : undefined) : eq(requisiteSets.tenantId, scope),
      owner === null ? undefined : eq(requisiteSets.createdBy, owner),
      q.setId ? eq(requisiteSets.id, q.setId) : undefined,
      q.before ? lt(requisiteSets.createdAt, q.before) : undefined,
    ))
    .orderBy(desc(requisiteSets.createdAt))
    .limit(q.limit);
  return rows.map((r) => {
    const fields = readFields(keyring, r.id, r.version, r);
    return {
      id: r.id, tenantId: r.tenantId, version: r.version, createdAt: r.createdAt, updatedAt: r.updatedAt,
      erased: r.erasedAt !== null, masked: fields ? maskRequisites(fields) : null,
    };
  });
}

export interface RevealedRequisiteSet {
  id: string;
  version: number;
  currentVersion: number;
  bookingId: string | null;
  fields: RequisiteFields;
}

/**
 * The full set, and its audit row in the same transaction (no read without its record). With a
 * bookingId the booking (asked of crm's module API) must be visible to the actor and reference this set;
 * the version read is the booking's. An agent reads the sets it created or the set of a booking it made.
 */
export async function revealRequisiteSet(tx: Tx, input: z.infer<typeof revealRequisiteSetInput>, ctx: ProfileContext): Promise<RevealedRequisiteSet> {
  const { actor } = ctx;
  authorizeProfile(actor, 'profile.reveal');
  const scope = profileTenantScope(actor);
  const [set] = await tx
    .select()
    .from(requisiteSets)
    .where(and(eq(requisiteSets.id, input.setId), scope === null ? undefined : eq(requisiteSets.tenantId, scope)));
  const notFound = () => profileError('PROFILE_REQUISITE_SET_NOT_FOUND', 'No such requisite set', { setId: input.setId });
  if (!set) throw notFound();
  let version = input.version ?? set.currentVersion;
  let bookingId: string | null = null;
  let agentViaBooking = false;
  if (input.bookingId) {
    const booking = await bookingRequisiteReference(tx, input.bookingId);
    if (!booking || !canSeeTenant(actor, booking.tenantId) || booking.requisiteSetId !== set.id) {
      throw profileError('PROFILE_BOOKING_NOT_FOUND', 'No such booking with this requisite set', { bookingId: input.bookingId, setId: set.id });
    }
    version = booking.requisiteSetVersion!;
    bookingId = booking.bookingId;
    agentViaBooking = booking.createdBy === actor.userId;
  }
  const owner = ownerScope(actor);
  if (owner !== null && set.createdBy !== owner && !agentViaBooking) throw notFound();
  if (set.erasedAt) throw profileError('PROFILE_REQUISITE_SET_ERASED', 'This requisite set was erased', { setId: set.id });
  const [stored] = await tx
    .select()
    .from(requisiteSetVersions)
    .where(and(eq(requisiteSetVersions.setId, set.id), eq(requisiteSetVersions.version, version)));
  if (!stored) throw profileError('PROFILE_REQUISITE_SET_NOT_FOUND', 'No such version of the requisite set', { setId: set.id, version });
  const fields = readFields(ctx.keyring, set.id, version, stored);
  if (!fields) throw profileError('PROFILE_REQUISITE_SET_ERASED', 'This requisite set was erased', { setId: set.id });
  await tx.insert(requisiteReads).values({
    setId: set.id, version, tenantId: set.tenantId, actorId: actor.userId, actorRole: actor.role, bookingId,
    correlationId: z.uuid().safeParse(ctx.correlationId).success ? ctx.correlationId : null, at: ctx.now,
  });
  return { id: set.id, version, currentVersion: set.currentVersion, bookingId, fields: requisiteFieldsInput.parse(fields) };
}

/** The audit of a set, newest first: who read it, when, for which booking (managers). */
export async function requisiteReadsOf(db: DbOrTx, setId: string) {
  return db.select().from(requisiteReads).where(eq(requisiteReads.setId, setId)).orderBy(desc(requisiteReads.id));
}
