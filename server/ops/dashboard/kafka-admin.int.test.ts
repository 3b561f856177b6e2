import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../../test/harness/harness';
import { closeOpsKafka, consumerLag, isConnectionError, opsAdminConnects, topicOffsets } from './kafka-admin';

/**
 * The dashboard's shared admin connection: a request the broker refuses (a topic that does not exist)
 * is that request's error: the reads running on the same connection go on, and the connection is kept
 * (it used to be dropped on any error, so every refused request cost the next reads a reconnect).
 */
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ kafka: true });
});
afterAll(async () => {
  await closeOpsKafka();
  await t?.close();
});

describe('ops Kafka admin connection', () => {
  it('a refused request does not cut off the reads in flight on the shared connection', async () => {
    await consumerLag(t.env); // connected
    const connects = opsAdminConnects(t.env);
    const missing = `${t.prefix}no-such-topic-${Date.now()}`;
    const results = await Promise.allSettled([
      ...Array.from({ length: 6 }, () => consumerLag(t.env)),
      topicOffsets({ ...t.env }, missing),
      ...Array.from({ length: 6 }, () => consumerLag(t.env)),
    ]);
    const refused = results[6]!;
    expect(refused.status).toBe('rejected');
    const lagReads = results.filter((_, i) => i !== 6);
    expect(lagReads.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(lagReads.map(() => 'ok'));
    // and the next read still works, on the same connection
    expect((await consumerLag(t.env)).length).toBeGreaterThan(0);
    expect(opsAdminConnects(t.env)).toBe(connects);
  }, 120_000);
});

describe('which errors drop the connection', () => {
  const named = (name: string, cause?: unknown) => Object.assign(new Error(name), { name, cause });
  it('connection-level errors do, also when they are the last retry\'s; a broker\'s refusal does not', () => {
    expect(isConnectionError(named('KafkaJSConnectionError'))).toBe(true);
    expect(isConnectionError(named('KafkaJSConnectionClosedError'))).toBe(true);
    expect(isConnectionError(named('KafkaJSNumberOfRetriesExceeded', named('KafkaJSRequestTimeoutError')))).toBe(true);
    expect(isConnectionError(named('KafkaJSNumberOfRetriesExceeded', named('KafkaJSProtocolError')))).toBe(false);
    expect(isConnectionError(named('KafkaJSProtocolError'))).toBe(false);
    expect(isConnectionError(named('KafkaJSNoBrokerAvailableError'))).toBe(true);
    expect(isConnectionError(new Error('boom'))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });
});
