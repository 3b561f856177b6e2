import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { outboxNotices, type OutboxNotice } from './write';

/** The NOTIFY payloads of outbox writes, read by the live feed (server/chessboard/live-feed.ts). */
describe('outboxNotices', () => {
  const parse = (notices: string[]) => notices.map((n) => JSON.parse(n) as OutboxNotice);

  it('one notice per tenant, naming the distinct buildings of its events', () => {
    const [a, b, x, y] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const notices = parse(outboxNotices([
      { tenantId: a, payload: { buildingId: x } },
      { tenantId: a, payload: { buildingId: y } },
      { tenantId: a, payload: { buildingId: x } },
      { tenantId: b, payload: { buildingId: y } },
    ]));
    expect(notices).toEqual([{ t: a, b: [x, y] }, { t: b, b: [y] }]);
  });

  it('an event without a building makes its tenant\'s notice name none (= every building of the tenant)', () => {
    const [a, x] = [randomUUID(), randomUUID()];
    expect(parse(outboxNotices([{ tenantId: a, payload: { buildingId: x } }, { tenantId: a, payload: { projectId: x } }]))).toEqual([{ t: a }]);
    expect(parse(outboxNotices([{ tenantId: a, payload: { bookingId: x } }]))).toEqual([{ t: a }]);
  });

  it('stays under the 8000-byte NOTIFY limit: a long building list is dropped', () => {
    const a = randomUUID();
    const notices = outboxNotices(Array.from({ length: 500 }, () => ({ tenantId: a, payload: { buildingId: randomUUID() } })));
    expect(parse(notices)).toEqual([{ t: a }]);
    expect(notices.every((n) => n.length < 8000)).toBe(true);
  });
});
