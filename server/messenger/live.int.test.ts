import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../test/fixtures/chessboard.fixtures';
import { ensureLiveListener, openLiveStream, type LiveEvent } from '../chessboard/live-feed';
import { actor, callerFor } from '../../test/fixtures/crm.fixtures';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { dealChats } from './schema';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
  await ensureLiveListener(t.database, t.logger);
});
afterAll(async () => {
  await t?.close();
});

async function testStream(tenantId: string | null) {
  const events: LiveEvent[] = [];
  const close = await openLiveStream({ tenantId, revocationKey: randomUUID(), building: null, notify: (e) => events.push(e), revoked: () => {} });
  return { events, close };
}

describe('deal chat live (pin_messenger NOTIFY → the SSE streams)', () => {
  it('a message posted in a chat reaches its tenant\'s streams and the all-tenant ones, not another tenant\'s', async () => {
    const [tenantA, tenantB] = [randomUUID(), randomUUID()];
    const dealId = randomUUID();
    await t.database.db.insert(dealChats).values({ dealId, tenantId: tenantA });
    const [a, b, all] = [await testStream(tenantA), await testStream(tenantB), await testStream(null)];
    const entry = await callerFor(t, actor('developer_manager', tenantA)).messenger.post({ dealId, text: 'hello' });
    expect(entry).toMatchObject({ kind: 'message', text: 'hello', authorRole: 'developer_manager' });
    await eventually(async () => a.events.includes('messenger'), 10_000, 'tenant A hears its chat');
    expect(all.events).toContain('messenger');
    expect(b.events).toEqual([]);
    for (const s of [a, b, all]) s.close();
  });

  it('a refused post (empty after trimming) writes nothing and notifies nobody', async () => {
    const tenant = randomUUID();
    const dealId = randomUUID();
    await t.database.db.insert(dealChats).values({ dealId, tenantId: tenant });
    const s = await testStream(tenant);
    await expect(callerFor(t, actor('pin_manager', null)).messenger.post({ dealId, text: ' \n\t ' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await new Promise((r) => setTimeout(r, 300));
    expect(s.events).toEqual([]);
    expect(await t.database.sql`SELECT 1 FROM messenger.messages WHERE deal_id = ${dealId}`).toHaveLength(0);
    s.close();
  });
});
