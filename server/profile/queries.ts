import { and, desc, eq, lt } from 'drizzle-orm';
import { z } from 'zod';
import { storableDate } from '../platform/date-input';
import type { Actor } from '../auth/actor';
import { canSeeTenant, tenantScope } from '../auth/actor';
import { bookingRequisiteReference } from '../crm/requisite-references';
import type { DbOrTx, Tx } from '../platform/db';
import type { ProfileContext } from './commands';
import { decryptFields, type Keyring } from './crypto';
import { profileError } from './errors';
import { authorizeProfile } from './permissions';
import { maskRequisites, requisiteFieldsInput, type MaskedRequisites, type RequisiteFields } from './requisites';
import { requisiteReads, requisiteSets, requisiteSetVersions } from './schema';
import { usableRequisiteSets } from './set-scope';

export const listRequisiteSetsInput = z.strictObject({
  tenantId: z.uuid().optional(),
  /** one set by id (the booking page shows the booking's set) */
  setId: z.uuid().optional(),
  /** createdAt of the last row of the previous page */
  before: storableDate().optional(),
  limit: z.number().int().min(1).max(100).default(50),
});
export const revealRequisiteSetInput = z.strictObject({
  setId: z.uuid(),
  /** the booking the set is read for: then the version the booking was made with is read, and the audit names it */
  bookingId: z.uuid().optional(),
  /** a version other than the current one (without bookingId) */
  version: z.number().int().positive().max(1_000_000).optional(),
  /** why the full data is needed (stored with the audit row; the reveal log shows it) */
  reason: z.string().trim().min(3, 'reason: at least 3 characters').max(300, 'reason: at most 300 characters'),
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
  const rows = await db
    .select({
      id: requisiteSets.id, tenantId: requisiteSets.tenantId, version: requisiteSets.currentVersion, createdAt: requisiteSets.createdAt,
      updatedAt: requisiteSets.updatedAt, erasedAt: requisiteSets.erasedAt, ciphertext: requisiteSetVersions.ciphertext, keyId: requisiteSetVersions.keyId,
    })
    .from(requisiteSets)
    .innerJoin(requisiteSetVersions, and(eq(requisiteSetVersions.setId, requisiteSets.id), eq(requisiteSetVersions.version, requisiteSets.currentVersion)))
    .where(and(
      usableRequisiteSets(actor),
      q.tenantId ? eq(requisiteSets.tenantId, q.tenantId) : undefined,
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

/** The revealed set (the only answer of profile that carries the personal data): the fields as requisiteFieldsInput reads them. */
export const revealRequisiteSetOutput = z.object({
  id: z.guid(), version: z.number().int(), currentVersion: z.number().int(), bookingId: z.guid().nullable(), fields: requisiteFieldsInput,
});
export type RevealedRequisiteSet = z.infer<typeof revealRequisiteSetOutput>;

/**
 * The full set, and its audit row (with the reader's reason) in the same transaction (no read without its
 * record). The set must be one the actor may use (permissions.ts canUseRequisiteSet — the rule crm's
 * reference check applies too); otherwise it answers exactly like an unknown id. With a bookingId the
 * booking (asked of crm's module API) must also be one the actor may act on — in its tenant, and for an
 * agent one it created — and reference this set; the version read is then the booking's. A booking never
 * widens what the actor may read.
 */
export async function revealRequisiteSet(tx: Tx, input: z.infer<typeof revealRequisiteSetInput>, ctx: ProfileContext): Promise<RevealedRequisiteSet> {
  const { actor } = ctx;
  authorizeProfile(actor, 'profile.reveal');
  const [set] = await tx
    .select()
    .from(requisiteSets)
    .where(and(eq(requisiteSets.id, input.setId), usableRequisiteSets(actor)));
  if (!set) throw profileError('PROFILE_REQUISITE_SET_NOT_FOUND', 'No such requisite set', { setId: input.setId });
  let version = input.version ?? set.currentVersion;
  let bookingId: string | null = null;
  if (input.bookingId) {
    const booking = await bookingRequisiteReference(tx, input.bookingId);
    const mayActOn = booking !== null && canSeeTenant(actor, booking.tenantId) && (actor.role !== 'agent' || booking.createdBy === actor.userId);
    if (!booking || !mayActOn || booking.requisiteSetId !== set.id) {
      throw profileError('PROFILE_BOOKING_NOT_FOUND', 'No such booking with this requisite set', { bookingId: input.bookingId, setId: set.id });
    }
    version = booking.requisiteSetVersion!;
    bookingId = booking.bookingId;
  }
  if (set.erasedAt) throw profileError('PROFILE_REQUISITE_SET_ERASED', 'This requisite set was erased', { setId: set.id });
  const [stored] = await tx
    .select()
    .from(requisiteSetVersions)
    .where(and(eq(requisiteSetVersions.setId, set.id), eq(requisiteSetVersions.version, version)));
  if (!stored) throw profileError('PROFILE_REQUISITE_SET_NOT_FOUND', 'No such version of the requisite set', { setId: set.id, version });
  const fields = readFields(ctx.keyring, set.id, version, stored);
  if (!fields) throw profileError('PROFILE_REQUISITE_SET_ERASED', 'This requisite set was erased', { setId: set.id });
  await tx.insert(requisiteReads).values({
    setId: set.id, version, tenantId: set.tenantId, actorId: actor.userId, actorRole: actor.role, bookingId, reason: input.reason,
    correlationId: z.uuid().safeParse(ctx.correlationId).success ? ctx.correlationId : null, at: ctx.now,
  });
  return { id: set.id, version, currentVersion: set.currentVersion, bookingId, fields: requisiteFieldsInput.parse(fields) };
}

export const listRequisiteRevealsInput = z.strictObject({
  /** reads of one set */
  setId: z.uuid().optional(),
  /** reads by one user */
  actorId: z.string().trim().min(1).max(100).optional(),
  /** one tenant (cross-tenant readers); a tenant-scoped reader is held to its own whatever it asks */
  tenantId: z.uuid().optional(),
  /** the id of the last row of the previous page (newest first) */
  before: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export interface RequisiteReveal {
  id: number;
  at: Date;
  setId: string;
  version: number;
  tenantId: string;
  actorId: string;
  actorRole: string;
  bookingId: string | null;
  /** null only on reads logged before a reason was asked */
  reason: string | null;
  correlationId: string | null;
}

/**
 * The reveal log: who revealed which set, when, why, for which booking — newest first, by set and/or by
 * user. Ids and reasons only, never a field. Tenant-scoped for any tenant-scoped reader (a foreign tenant's
 * rows are simply absent).
 */
export async function listRequisiteReveals(db: DbOrTx, actor: Actor, input: z.input<typeof listRequisiteRevealsInput>): Promise<RequisiteReveal[]> {
  authorizeProfile(actor, 'profile.reveals');
  const q = listRequisiteRevealsInput.parse(input);
  const scope = tenantScope(actor);
  return db
    .select({
      id: requisiteReads.id, at: requisiteReads.at, setId: requisiteReads.setId, version: requisiteReads.version, tenantId: requisiteReads.tenantId,
      actorId: requisiteReads.actorId, actorRole: requisiteReads.actorRole, bookingId: requisiteReads.bookingId, reason: requisiteReads.reason,
      correlationId: requisiteReads.correlationId,
    })
    .from(requisiteReads)
    .where(and(
      scope === null ? undefined : eq(requisiteReads.tenantId, scope),
      q.tenantId ? eq(requisiteReads.tenantId, q.tenantId) : undefined,
      q.setId ? eq(requisiteReads.setId, q.setId) : undefined,
      q.actorId ? eq(requisiteReads.actorId, q.actorId) : undefined,
      q.before ? lt(requisiteReads.id, q.before) : undefined,
    ))
    .orderBy(desc(requisiteReads.id))
    .limit(q.limit);
}

/** The audit of a set, newest first: who read it, when, for which booking (managers). */
export async function requisiteReadsOf(db: DbOrTx, setId: string) {
  return db.select().from(requisiteReads).where(eq(requisiteReads.setId, setId)).orderBy(desc(requisiteReads.id));
}
