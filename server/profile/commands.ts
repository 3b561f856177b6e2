import { randomUUID } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Actor } from '../auth/actor';
import { activeBookingsReferencingRequisiteSet } from '../crm/requisite-references';
import type { CommandContext } from '../platform/command-context';
import type { Tx } from '../platform/db';
import { encryptFields, type Keyring } from './crypto';
import { profileError } from './errors';
import { authorizeProfile, profileTenantScope } from './permissions';
import { requisiteFieldsInput } from './requisites';
import { requisiteErasures, requisiteSets, requisiteSetVersions } from './schema';
import { usableRequisiteSets } from './set-scope';

/** What every profile command gets besides its input: the common command context and the keyring of the personal data. */
export interface ProfileContext extends CommandContext<Actor> {
  keyring: Keyring;
}

export const createRequisiteSetInput = z.strictObject({
  /** required for pin_manager (cross-tenant); a tenant role's own tenant otherwise, and it must match */
  tenantId: z.uuid().optional(),
  fields: requisiteFieldsInput,
});
export const editRequisiteSetInput = z.strictObject({
  setId: z.uuid(),
  /** the version the editor saw: a concurrent edit answers PROFILE_REQUISITE_SET_VERSION_CONFLICT */
  expectedVersion: z.number().int().positive().max(1_000_000),
  fields: requisiteFieldsInput,
});
export const eraseRequisiteSetInput = z.strictObject({
  setId: z.uuid(),
  reason: z.string().trim().min(3, 'reason: at least 3 characters').max(500, 'reason: at most 500 characters'),
});

// What the commands answer: ids, versions and times only — never the personal data.
export const createRequisiteSetOutput = z.object({ id: z.guid(), version: z.number().int() });
export const editRequisiteSetOutput = createRequisiteSetOutput;
export const eraseRequisiteSetOutput = z.object({ id: z.guid(), erasedAt: z.date() });
export type RequisiteSetRef = z.infer<typeof createRequisiteSetOutput>;

function tenantFor(actor: Actor, asked: string | undefined): string {
  const scope = profileTenantScope(actor);
  if (scope === null) {
    if (!asked) throw profileError('PROFILE_FORBIDDEN', 'Choose the tenant the requisite set belongs to');
    return asked;
  }
  // a tenant role names no other tenant; a foreign one is refused as if it did not exist
  if (asked && asked !== scope) throw profileError('PROFILE_FORBIDDEN', 'Your account works in another tenant');
  return scope;
}

/**
 * The set row under a row lock, if the actor may use it (permissions.ts canUseRequisiteSet); a foreign or
 * another agent's set looks missing and is not locked (the rule is in the WHERE).
 */
export async function lockRequisiteSet(tx: Tx, actor: Actor, setId: string) {
  const [row] = await tx
    .select()
    .from(requisiteSets)
    .where(and(eq(requisiteSets.id, setId), usableRequisiteSets(actor)))
    .for('update');
  if (!row) throw profileError('PROFILE_REQUISITE_SET_NOT_FOUND', 'No such requisite set', { setId });
  return row;
}

export async function createRequisiteSetCommand(tx: Tx, input: z.infer<typeof createRequisiteSetInput>, ctx: ProfileContext): Promise<RequisiteSetRef> {
  authorizeProfile(ctx.actor, 'profile.create');
  const tenantId = tenantFor(ctx.actor, input.tenantId);
  const id = randomUUID();
  const sealed = encryptFields(ctx.keyring, id, 1, input.fields);
  await tx.insert(requisiteSets).values({ id, tenantId, currentVersion: 1, createdBy: ctx.actor.userId, createdAt: ctx.now, updatedAt: ctx.now });
  await tx.insert(requisiteSetVersions).values({ setId: id, version: 1, ...sealed, createdBy: ctx.actor.userId, createdAt: ctx.now });
  return { id, version: 1 };
}

/** A new version; the old one stays (bookings made with it keep pointing at what they were made with). */
export async function editRequisiteSetCommand(tx: Tx, input: z.infer<typeof editRequisiteSetInput>, ctx: ProfileContext): Promise<RequisiteSetRef> {
  authorizeProfile(ctx.actor, 'profile.edit');
  const set = await lockRequisiteSet(tx, ctx.actor, input.setId);
  if (set.erasedAt) throw profileError('PROFILE_REQUISITE_SET_ERASED', 'This requisite set was erased', { setId: set.id });
  if (set.currentVersion !== input.expectedVersion) {
    throw profileError('PROFILE_REQUISITE_SET_VERSION_CONFLICT', 'The requisite set was changed by someone else', {
      setId: set.id, expectedVersion: input.expectedVersion, currentVersion: set.currentVersion,
    });
  }
  const version = set.currentVersion + 1;
  const sealed = encryptFields(ctx.keyring, set.id, version, input.fields);
  await tx.insert(requisiteSetVersions).values({ setId: set.id, version, ...sealed, createdBy: ctx.actor.userId, createdAt: ctx.now });
  await tx.update(requisiteSets).set({ currentVersion: version, updatedAt: ctx.now }).where(eq(requisiteSets.id, set.id));
  return { id: set.id, version };
}

/**
 * Erasure on request: every version's fields are wiped (ciphertext NULL), the id and an erasure record
 * stay, so bookings and the audit keep pointing at something. Refused while an active booking references
 * the set (asked of crm's module API). The set row is locked FOR UPDATE first; booking.create takes it
 * FOR SHARE (module-api.ts), so a booking cannot slip in between the check and the wipe.
 */
export async function eraseRequisiteSetCommand(tx: Tx, input: z.infer<typeof eraseRequisiteSetInput>, ctx: ProfileContext): Promise<z.infer<typeof eraseRequisiteSetOutput>> {
  authorizeProfile(ctx.actor, 'profile.erase');
  const set = await lockRequisiteSet(tx, ctx.actor, input.setId);
  if (set.erasedAt) throw profileError('PROFILE_REQUISITE_SET_ERASED', 'This requisite set was erased already', { setId: set.id });
  const active = await activeBookingsReferencingRequisiteSet(tx, set.id);
  if (active > 0) {
    throw profileError('PROFILE_REQUISITE_SET_IN_USE', 'An active booking references this requisite set', { setId: set.id, activeBookings: active });
  }
  await tx.update(requisiteSetVersions).set({ ciphertext: null, keyId: null }).where(and(eq(requisiteSetVersions.setId, set.id), sql`${requisiteSetVersions.ciphertext} IS NOT NULL`));
  await tx.update(requisiteSets).set({ erasedAt: ctx.now, updatedAt: ctx.now }).where(and(eq(requisiteSets.id, set.id), isNull(requisiteSets.erasedAt)));
  await tx.insert(requisiteErasures).values({ setId: set.id, tenantId: set.tenantId, erasedBy: ctx.actor.userId, reason: input.reason, erasedAt: ctx.now });
  return { id: set.id, erasedAt: ctx.now };
}
