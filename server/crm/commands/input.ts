import { z } from 'zod';
import type { Actor } from '../../auth/actor';
import type { Tx } from '../../platform/db';
import { checkRequisiteReference } from '../ports';
import { crmError } from '../errors';

/** Input building blocks of the crm commands (strict objects, bounded strings, uuids). */

export const idempotencyKeyInput = z.string().trim().min(8).max(128).regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits, . _ : -');
export const expectedVersionInput = z.number().int().positive().max(1_000_000_000);
export const reasonInput = z.string().trim().min(1).max(500);
export const documentInput = z.string().trim().min(1).max(500);

/** Input of every command on one booking. */
export const bookingCommandInput = {
  bookingId: z.uuid(),
  expectedVersion: expectedVersionInput.optional(),
  idempotencyKey: idempotencyKeyInput.optional(),
};

/** The buyer's requisite set of a booking (profile): both or neither. */
export const requisitesInput = z.strictObject({
  setId: z.uuid(),
  version: z.number().int().positive().max(1_000_000),
});

/**
 * The set must exist in the booking's tenant with its fields, and be one the actor may use (its creator,
 * the tenant's managers: profile's rule, the one reveal applies) — asked of profile's module API (through crm's port, ports.ts), which
 * takes the set FOR SHARE until this transaction ends: an erasure cannot slip in. A set the actor may not
 * use answers exactly like an unknown one. Ids only in the error.
 */
export async function assertRequisitesUsable(tx: Tx, actor: Actor, tenantId: string, requisites: z.infer<typeof requisitesInput>): Promise<void> {
  const verdict = await checkRequisiteReference(tx, actor, { tenantId, setId: requisites.setId, version: requisites.version });
  if (verdict === 'not-found') {
    throw crmError('CRM_BOOKING_REQUISITE_SET_NOT_FOUND', 'No such requisite set (or version) in this tenant', { requisiteSetId: requisites.setId, version: requisites.version });
  }
  if (verdict === 'erased') {
    throw crmError('CRM_BOOKING_REQUISITE_SET_ERASED', 'This requisite set was erased', { requisiteSetId: requisites.setId });
  }
}
