import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../testing/harness';
import { ensureLiveListener, subscribeLive, type LiveSignal } from './live-feed';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

function nextSignal(want: LiveSignal, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`no ${want} signal within ${timeoutMs} ms`)); }, timeoutMs);
    const off = subscribeLive((s) => {
      if (s !== want) return;
      clearTimeout(timer);
      off();
      resolve(Date.now());
    });
  });
}

describe('live feed (LISTEN on the outbox channels)', () => {
  it('signals open grids within 1 s of a chessboard outbox commit, and not before the commit', async () => {
    await ensureLiveListener(t.database, t.logger);
    const received = nextSignal('chessboard', 1000);
    let committedAt = 0;
    let early = false;
    const off = subscribeLive((s) => { if (s === 'chessboard' && committedAt === 0) early = true; });
    await t.database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_notify('pin_outbox_chessboard', '')`);
      await new Promise((r) => setTimeout(r, 150)); // NOTIFY is delivered at commit, not now
      // the COMMIT goes out right after this callback returns; its answer (on this connection) and the
      // notification (on the listener's) may then arrive in either order, so "early" means before this
      committedAt = Date.now();
    });
    const at = await received;
    off();
    expect(early).toBe(false);
    expect(at - committedAt).toBeLessThan(1000);
  });

  it('signals crm changes on their own channel', async () => {
    await ensureLiveListener(t.database, t.logger);
    const received = nextSignal('crm', 1000);
    await t.database.db.execute(sql`SELECT pg_notify('pin_outbox_crm', '')`);
    await expect(received).resolves.toBeGreaterThan(0);
  });
});
