import { z } from 'zod';
import type { Tx } from '../platform/db';
import type { Actor } from '../auth/actor';
import { AppError } from '../platform/errors';
import { deleteProject, deletePropertyObject, setPropertyObjectHidden } from './commands';
import { CATALOG_ACTION_ROLES } from './catalog-action-roles';
import { PROPERTY_OBJECT_STATUSES } from './schema';
import { parseInput, reasonInput, writeAudit } from './commands/command-support';
import type { CommandContext } from '../platform/command-context';

/**
 * Catalog actions of the console: a developer manager (or a PIN manager) hides / shows an
 * object on the storefront, withdraws (deletes) an object or a whole project. The chessboard commands
 * do the change and publish its event (the catalog delists the card, which feeds the Delisted backlog
 * that delisted-retention later purges); this layer adds what a person's action needs: the role gate,
 * a required reason and an audit row, all in the command's transaction.
 */

export { CATALOG_ACTION_ROLES };

const reason = z.string().trim().min(1).max(500);
export const setObjectHiddenInput = z.object({ propertyObjectId: z.uuid(), hidden: z.boolean(), reason });
export const withdrawObjectInput = z.object({ propertyObjectId: z.uuid(), reason });
export const withdrawProjectInput = z.object({ projectId: z.uuid(), reason });

// What the actions answer. Ids come from uuid columns (z.guid); messageId is the event's (null: nothing changed).
/** the object's status after the action; `changed` false when it already was as asked */
export const setObjectHiddenOutput = z.object({
  propertyObjectId: z.guid(), changed: z.boolean(), status: z.enum(PROPERTY_OBJECT_STATUSES), version: z.number().int(), messageId: z.guid().nullable(),
});
export const withdrawObjectOutput = z.object({ propertyObjectId: z.guid(), messageId: z.guid() });
/** `deleted` false when the project was already withdrawn */
export const withdrawProjectOutput = z.object({
  projectId: z.guid(), deleted: z.boolean(), deletedObjects: z.number().int(), messageId: z.guid().nullable(),
});

/** The router's schemas with the commands' reason (the same rule, the commands' message when called directly). */
const withdrawObjectCommandInput = withdrawObjectInput.extend({ reason: reasonInput });
const withdrawProjectCommandInput = withdrawProjectInput.extend({ reason: reasonInput });

/** The command checks again (a call from elsewhere is not a hole); the router gates the same roles. */
function assertCatalogRole(actor: Actor): void {
  if (!(CATALOG_ACTION_ROLES as readonly string[]).includes(actor.role)) {
    throw new AppError('CHESSBOARD_FORBIDDEN', 'FORBIDDEN', `role ${actor.role} may not change the catalog`);
  }
}

export async function setObjectHiddenAction(tx: Tx, input: z.input<typeof setObjectHiddenInput>, ctx: CommandContext<Actor>): Promise<z.infer<typeof setObjectHiddenOutput>> {
  assertCatalogRole(ctx.actor);
  // setPropertyObjectHidden scopes by tenant, requires the reason and writes the audit row itself
  return setPropertyObjectHidden(tx, input, ctx);
}

export async function withdrawObjectAction(tx: Tx, given: z.input<typeof withdrawObjectInput>, ctx: CommandContext<Actor>): Promise<z.infer<typeof withdrawObjectOutput>> {
  assertCatalogRole(ctx.actor);
  const { reason: why, ...input } = parseInput(withdrawObjectCommandInput, given);
  const at = ctx.now;
  // tenant scope: a foreign tenant's object answers CHESSBOARD_PROPERTY_OBJECT_NOT_FOUND inside the command
  const r = await deletePropertyObject(tx, input, ctx);
  await writeAudit(tx, {
    actor: ctx.actor, action: 'chessboard.withdraw-property-object', targetType: 'PropertyObject', targetId: r.propertyObjectId,
    reason: why, at, details: { messageId: r.messageId },
  });
  return r;
}

export async function withdrawProjectAction(tx: Tx, given: z.input<typeof withdrawProjectInput>, ctx: CommandContext<Actor>): Promise<z.infer<typeof withdrawProjectOutput>> {
  assertCatalogRole(ctx.actor);
  const { reason: why, ...input } = parseInput(withdrawProjectCommandInput, given);
  const at = ctx.now;
  const r = await deleteProject(tx, input, ctx);
  if (r.deleted) {
    await writeAudit(tx, {
      actor: ctx.actor, action: 'chessboard.withdraw-project', targetType: 'Project', targetId: r.projectId,
      reason: why, at, details: { deletedObjects: r.deletedObjects, messageId: r.messageId },
    });
  }
  return r;
}
