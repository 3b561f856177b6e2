import { and, eq } from 'drizzle-orm';
import type { Tx } from '../platform/db';
import { requisiteSets, requisiteSetVersions } from './schema';

/**
 * profile's module API for crm: crm reads no profile table and holds no personal data, only a
 * reference (set id + version). The answer is a verdict, never a field.
 */
export type RequisiteReferenceVerdict = 'ok' | 'not-found' | 'erased';

/**
 * Whether `setId` at `version` exists in `tenantId` and still has its fields. Takes the set row FOR SHARE
 * until the caller's transaction ends, so an erasure (FOR UPDATE, commands.ts) waits for the booking that
 * references the set to commit, then sees it. A foreign tenant's set answers not-found like a missing one.
 */
export async function checkRequisiteReference(tx: Tx, ref: { tenantId: string; setId: string; version: number }): Promise<RequisiteReferenceVerdict> {
  const [set] = await tx
    .select({ erasedAt: requisiteSets.erasedAt, tenantId: requisiteSets.tenantId })
    .from(requisiteSets)
    .where(eq(requisiteSets.id, ref.setId))
    .for('share');
  if (!set || set.tenantId !== ref.tenantId) return 'not-found';
  if (set.erasedAt) return 'erased';
  const [version] = await tx
    .select({ version: requisiteSetVersions.version })
    .from(requisiteSetVersions)
    .where(and(eq(requisiteSetVersions.setId, ref.setId), eq(requisiteSetVersions.version, ref.version)));
  return version ? 'ok' : 'not-found';
}
