import { describe, expect, it } from 'vitest';
import { dispatchChessboardEvent } from './dispatch-chessboard';
import { TOPICS } from './topics';

describe('dispatchChessboardEvent (the projections\' shared topic switch)', () => {
  it('hands the payload to the handler of its topic, and only to it', async () => {
    const seen: string[] = [];
    const handlers = {
      [TOPICS.propertyObjectUpserted]: async (p: { propertyObjectId: string }) => { seen.push(`upserted ${p.propertyObjectId}`); return { result: 'applied' as const }; },
      [TOPICS.propertyObjectDeleted]: async (p: { propertyObjectId: string }) => { seen.push(`deleted ${p.propertyObjectId}`); return { result: 'no-op' as const, detail: 'stale' }; },
    };
    expect(await dispatchChessboardEvent(handlers as never, TOPICS.propertyObjectDeleted, { propertyObjectId: 'a' })).toEqual({ result: 'no-op', detail: 'stale' });
    expect(await dispatchChessboardEvent(handlers as never, TOPICS.propertyObjectUpserted, { propertyObjectId: 'b' })).toEqual({ result: 'applied' });
    expect(seen).toEqual(['deleted a', 'upserted b']);
  });

  it('a topic without a handler is a no-op that names the topic', async () => {
    expect(await dispatchChessboardEvent({}, TOPICS.projectDeleted, {})).toEqual({ result: 'no-op', detail: `topic ${TOPICS.projectDeleted} is not projected` });
  });
});
