import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Actor } from '../../auth/actor';
import type { CommandContext } from '../../platform/command-context';
import type { Tx } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { MESSENGER_ERRORS } from '../errors';
import { notifyChat } from '../live';
import { chatEntryOutput, chatNotFound, loadChat, mayPost, type ChatEntry } from '../queries';
import { dealChats, messages } from '../schema';

export const MAX_MESSAGE_CHARS = 2000;

/** Plain text only (rendered as text, never as HTML); trimmed; 1..2000 characters after trimming. */
export const postMessageInput = z.object({
  dealId: z.uuid(),
  text: z.string().max(MAX_MESSAGE_CHARS * 4).transform((s) => s.trim()).pipe(z.string().min(1).max(MAX_MESSAGE_CHARS)),
});
export type PostMessageInput = z.input<typeof postMessageInput>;
/** the posted message as the chat shows it */
export const postMessageOutput = chatEntryOutput;

/**
 * messenger.post: a participant's message in the deal's chat (its agent, the tenant's developer managers,
 * PIN managers). The chat must exist (opened by the deal's first booking event); a foreign tenant's chat
 * is not found. The insert and its NOTIFY commit together.
 */
export async function postMessageCommand(tx: Tx, raw: PostMessageInput, ctx: CommandContext<Actor>): Promise<ChatEntry> {
  const { actor, now } = ctx;
  const parsed = postMessageInput.safeParse(raw);
  if (!parsed.success) throw new AppError(MESSENGER_ERRORS.INVALID_TEXT, 'BAD_REQUEST', 'The message must have 1 to 2000 characters');
  const input = parsed.data;
  const chat = await loadChat(tx, actor, input.dealId);
  if (!chat) throw chatNotFound(input.dealId);
  if (!mayPost(actor, chat)) throw new AppError(MESSENGER_ERRORS.FORBIDDEN, 'FORBIDDEN', 'Only the participants of the deal may write in its chat');
  const [row] = await tx.insert(messages).values({
    tenantId: chat.tenantId, dealId: chat.dealId, kind: 'message', authorId: actor.userId, authorRole: actor.role, text: input.text, occurredAt: now,
  }).returning();
  await tx.execute(sql`UPDATE ${dealChats} SET last_message_at = GREATEST(last_message_at, ${now.toISOString()}) WHERE deal_id = ${chat.dealId}`);
  await notifyChat(tx, chat.tenantId, chat.dealId);
  return {
    id: row!.id, kind: 'message', bookingId: null, cardType: null, card: null,
    authorId: row!.authorId, authorRole: row!.authorRole, text: row!.text, occurredAt: row!.occurredAt,
  };
}
