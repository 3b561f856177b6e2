import { and, desc, eq, lt, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { tenantScope, type Actor } from '../auth/actor';
import type { DbOrTx } from '../platform/db';
import { AppError } from '../platform/errors';
import { MESSENGER_ERRORS } from './errors';
import { CARD_TYPES, dealChats, messages } from './schema';

export const chatInput = z.object({
  dealId: z.uuid(),
  /** older page: entries with id < before */
  before: z.number().int().positive().optional(),
  limit: z.number().int().min(1).max(200).default(50),
});
export type ChatInput = z.input<typeof chatInput>;

/** One entry of a chat: a system card of a crm event or a participant's message. */
export const chatEntryOutput = z.object({
  id: z.number().int(),
  kind: z.enum(['card', 'message']),
  bookingId: z.guid().nullable(),
  cardType: z.enum(CARD_TYPES).nullable(),
  card: z.record(z.string(), z.unknown()).nullable(),
  authorId: z.string().nullable(),
  authorRole: z.string().nullable(),
  text: z.string().nullable(),
  occurredAt: z.date(),
});
export type ChatEntry = z.infer<typeof chatEntryOutput>;

export interface Chat {
  dealId: string;
  tenantId: string;
  agentId: string | null;
  /** oldest first, newest last */
  entries: ChatEntry[];
  /** pass as `before` for the previous page; null: this page starts at the chat's first entry */
  olderCursor: number | null;
  /** the viewer is a participant of the deal and may post */
  canPost: boolean;
}

export const chatNotFound = (dealId: string) => new AppError(MESSENGER_ERRORS.CHAT_NOT_FOUND, 'NOT_FOUND', 'No chat for this deal', { dealId });

/** The roles that may post in a deal chat (the router's gate; the agent only in its own deal's chat). */
export const POSTING_ROLES = ['agent', 'developer_manager', 'pin_manager'] as const;

/**
 * Who may post: the deal's participants — its agent (as the events name it), the tenant's developer
 * managers, and PIN managers. Tenant scope is checked by the caller's query (a foreign chat is not found).
 */
export function mayPost(actor: Actor, chat: { agentId: string | null }): boolean {
  if (actor.role === 'pin_manager' || actor.role === 'developer_manager') return true;
  return actor.role === 'agent' && chat.agentId !== null && chat.agentId === actor.userId;
}

/** The chat of a deal in the actor's tenant scope, or null (a foreign tenant's or another investor's chat looks missing). */
export async function loadChat(db: DbOrTx, actor: Actor, dealId: string) {
  // an investor reads the chats of its own deals (as booking-created named it), whatever the developer
  const scope = actor.role === 'investor' ? null : tenantScope(actor);
  const where: SQL | undefined = and(eq(dealChats.dealId, dealId), scope === null ? undefined : eq(dealChats.tenantId, scope),
    actor.role === 'investor' ? eq(dealChats.investorId, actor.userId) : undefined);
  const [chat] = await db.select().from(dealChats).where(where);
  return chat ?? null;
}

/** messenger.chat: cards and messages of a deal's chat, newest last, one page at a time. */
export async function chatOf(db: DbOrTx, actor: Actor, raw: ChatInput): Promise<Chat> {
  const input = chatInput.parse(raw);
  const chat = await loadChat(db, actor, input.dealId);
  if (!chat) throw chatNotFound(input.dealId);
  const rows = await db.select().from(messages)
    .where(and(eq(messages.dealId, chat.dealId), eq(messages.tenantId, chat.tenantId), input.before ? lt(messages.id, input.before) : undefined))
    .orderBy(desc(messages.id))
    .limit(input.limit + 1);
  const more = rows.length > input.limit;
  const page = rows.slice(0, input.limit).reverse();
  return {
    dealId: chat.dealId,
    tenantId: chat.tenantId,
    agentId: chat.agentId,
    entries: page.map((r) => ({
      id: r.id, kind: r.kind, bookingId: r.bookingId, cardType: r.cardType, card: r.card ?? null,
      authorId: r.authorId, authorRole: r.authorRole, text: r.text, occurredAt: r.occurredAt,
    })),
    olderCursor: more && page.length > 0 ? page[0]!.id : null,
    canPost: mayPost(actor, chat),
  };
}
