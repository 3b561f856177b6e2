import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, callerFor, expectTrpcError, httpCall } from '../../test/fixtures/crm.fixtures';
import { createDatabase, type Database } from '../platform/db';
import { isDatabaseUnavailable } from '../platform/errors';
import { createTestContext, type TestContext } from '../../test/harness/harness';

/**
 * A database that cannot be reached is the server's trouble, not the request's, and nothing was done:
 * the API answers 503 SERVICE_UNAVAILABLE with the domain code DATABASE_UNAVAILABLE (the UI says
 * "try again shortly"), never a bare 500.
 */
let t: TestContext;
let unreachable: Database;
const pin = actor('pin_manager', null);

beforeAll(async () => {
  t = await createTestContext();
  // port 1 on loopback: nothing listens there, the connect is refused at once
  unreachable = createDatabase('postgres://postgres@127.0.0.1:1/pin', { max: 1, applicationName: 'pin-test-unreachable' });
});
afterAll(async () => {
  await unreachable?.close().catch(() => {});
  await t?.close();
});

describe('database unavailable', () => {
  it('a query and a command answer SERVICE_UNAVAILABLE / DATABASE_UNAVAILABLE', async () => {
    const down = { ...t, database: unreachable };
    await expectTrpcError(callerFor(down, pin).booking.list({}), 'SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE');
    await expectTrpcError(
      callerFor(down, pin).booking.create({ dealId: randomUUID(), propertyObjectId: randomUUID(), programId: randomUUID() }),
      'SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE',
    );
  });

  it('over HTTP: status 503 with the domain code, and the message says nothing of the connection', async () => {
    const res = await httpCall({ ...t, database: unreachable }, pin, 'booking.list', {}, 'query');
    expect(res.status).toBe(503);
    expect(res.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', domainCode: 'DATABASE_UNAVAILABLE', httpStatus: 503 });
    expect(JSON.stringify(res.body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|postgres:\/\//);
  });

  it('a backend terminated mid-request (what a PostgreSQL restart does) is classified the same way', async () => {
    const victim = createDatabase(t.env.DATABASE_URL, { max: 1, applicationName: 'pin-test-victim' });
    try {
      const [{ pid }] = await victim.sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      const running = victim.sql`SELECT pg_sleep(5)`.then(() => null, (e: unknown) => e);
      await new Promise((r) => setTimeout(r, 200));
      await t.database.sql`SELECT pg_terminate_backend(${pid})`;
      const error = await running;
      expect(error).toBeTruthy();
      expect(isDatabaseUnavailable(error), String((error as { code?: string })?.code)).toBe(true);
    } finally {
      await victim.close().catch(() => {});
    }
  });

  it('a request error is not mistaken for an outage', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('invalid byte sequence'), { code: '22021' }))).toBe(false);
    expect(isDatabaseUnavailable(new Error('no code'))).toBe(false);
  });
});
