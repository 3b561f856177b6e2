import { sql } from 'drizzle-orm';
import type { Tx } from '../platform/db';

/**
 * The NOTIFY channel of the deal chats: every card or message insert NOTIFYs `{ t: tenantId, d: dealId }`
 * in its transaction (delivered at commit); the live feed (server/chessboard/live-feed.ts) passes it to
 * the tenant's open streams as the `messenger` event, and an open deal page re-reads its chat.
 */
export const MESSENGER_CHANNEL = 'pin_messenger';

export function notifyChat(tx: Tx, tenantId: string, dealId: string) {
  return tx.execute(sql`SELECT pg_notify(${MESSENGER_CHANNEL}, ${JSON.stringify({ t: tenantId, d: dealId })})`);
}
