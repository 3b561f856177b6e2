import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import postgres from 'postgres';
import superjson from 'superjson';
import { drizzle } from 'drizzle-orm/postgres-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, callerFor, expectTrpcError, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { opsRouter } from '../ops/router';
import { insertObject, insertWorld, MIN } from '../../test/fixtures/ops-dashboard.fixtures';
import type { Database } from '../platform/db';
import { isDatabaseUnavailable } from '../platform/errors';
import { parseEnv } from '../main/env';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { createTestContext, routeHandlersOn, type TestContext } from '../../test/harness/harness';
import { getServices } from '../main/web-services';
import { createSession, SESSION_COOKIE } from '../auth/session';
import { insertUser } from '../../test/fixtures/auth.fixtures';
import { createContextFor, readDatabaseOf } from './context';
import { createCallerFactory, publicProcedure, router } from './init';

/**
 * What web does during a PostgreSQL failover: a session that lands on a standby (read-only) or loses
 * its connection is a 503 DATABASE_UNAVAILABLE that changed nothing; a read is run once more first
 * (its retry reaches the new primary); the ops dashboard reads from DATABASE_READ_URL when it is set.
 */
let t: TestContext;
let other: TestContext;
let readOnly: Database;
const pin = actor('pin_manager', null);

beforeAll(async () => {
  [t, other] = await Promise.all([createTestContext(), createTestContext()]);
  // a session of a hot standby as postgres.js may still hold one mid-switch: every write is refused with 25006
  const sql = postgres(t.url, { max: 1, onnotice: () => {}, connection: { default_transaction_read_only: true } });
  readOnly = { sql, db: drizzle(sql), close: () => sql.end({ timeout: 1 }) };
});
afterAll(async () => {
  await readOnly?.close().catch(() => {});
  await Promise.all([t?.close(), other?.close()]);
});

describe('a command on a read-only (standby) session', () => {
  it('answers 503 DATABASE_UNAVAILABLE and writes nothing', async () => {
    const tenantId = randomUUID();
    const objectId = await projectedObjectOf(t.database, tenantId);
    const { id: deal } = await insertDeal(t, tenantId);
    const { id: program } = await insertProgram(t, tenantId);
    const before = await t.database.sql<{ n: number }[]>`SELECT (SELECT count(*) FROM crm.bookings)::int + (SELECT count(*) FROM crm.outbox)::int AS n`;
    await expectTrpcError(
      callerFor({ ...t, database: readOnly }, pin).booking.create({ dealId: deal, propertyObjectId: objectId, programId: program, idempotencyKey: `ro-${randomUUID()}` }),
      'SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE',
    );
    const after = await t.database.sql<{ n: number }[]>`SELECT (SELECT count(*) FROM crm.bookings)::int + (SELECT count(*) FROM crm.outbox)::int AS n`;
    expect(after[0]!.n).toBe(before[0]!.n);
    // the same command on the primary goes through: the refusal was the session's, not the input's
    await callerFor(t, pin).booking.create({ dealId: deal, propertyObjectId: objectId, programId: program, idempotencyKey: `rw-${randomUUID()}` });
  });

  it('25006 is classified as an unavailable database; other 25xxx are not', async () => {
    const error = await readOnly.sql`CREATE TEMP TABLE x (id int)`.then(() => null, (e: unknown) => e);
    expect((error as { code?: string }).code).toBe('25006');
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('in failed transaction'), { code: '25P02' }))).toBe(false);
  });
});

describe('a lost connection: reads retried once, mutations never re-run', () => {
  const lost = () => Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' });
  let queryRuns = 0;
  let mutationRuns = 0;
  let failQueryTimes = 0;
  const probe = router({
    read: publicProcedure.query(() => {
      queryRuns++;
      if (queryRuns <= failQueryTimes) throw lost();
      return 'read';
    }),
    write: publicProcedure.mutation(() => {
      mutationRuns++;
      throw lost();
    }),
  });
  const caller = () => createCallerFactory(probe)(createContextFor({ database: t.database, env: t.env, logger: t.logger }, null));

  it('a query that lost its connection once answers from its second run', async () => {
    queryRuns = 0;
    failQueryTimes = 1;
    expect(await caller().read()).toBe('read');
    expect(queryRuns).toBe(2);
  });

  it('a query that fails twice is a 503, after exactly two runs', async () => {
    queryRuns = 0;
    failQueryTimes = 5;
    const e = await caller().read().then(() => null, (x: unknown) => x);
    expect(e).toBeInstanceOf(TRPCError);
    expect((e as TRPCError).code).toBe('SERVICE_UNAVAILABLE');
    expect(((e as TRPCError).cause as { code?: string }).code).toBe('DATABASE_UNAVAILABLE');
    expect(queryRuns).toBe(2);
  });

  it('a mutation runs once and answers 503 (its client retries with the same idempotency key)', async () => {
    mutationRuns = 0;
    const e = await caller().write().then(() => null, (x: unknown) => x);
    expect((e as TRPCError).code).toBe('SERVICE_UNAVAILABLE');
    expect(mutationRuns).toBe(1);
  });
});

/**
 * The pool of `t`'s database with its connection lost under the next `n` statements (`unsafe`: every
 * drizzle statement outside a transaction) or transactions (`begin`): what a query meets on the
 * connection of a primary that just died.
 */
function losingConnection(n: { statements?: number; transactions?: number }): Database & { lost: { statements: number; transactions: number } } {
  const lost = { statements: 0, transactions: 0 };
  const closed = () => Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' });
  // a postgres.js query is a promise with `.values()` (drizzle's row-array form) on it
  const failed = () => {
    const p = Promise.reject(closed());
    p.catch(() => {});
    return Object.assign(p, { values: () => p });
  };
  const real = t.database.sql;
  const sql = new Proxy(real, {
    get(target, key, receiver) {
      if (key === 'unsafe' && lost.statements < (n.statements ?? 0)) return () => { lost.statements++; return failed(); };
      if (key === 'begin' && lost.transactions < (n.transactions ?? 0)) return () => { lost.transactions++; return failed(); };
      const v = Reflect.get(target, key, receiver) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { sql, db: drizzle(sql), close: async () => {}, lost };
}

describe('a lost connection under a real procedure', () => {
  it('booking.list (a read) whose first statement lost its connection answers from its second run', async () => {
    const down = losingConnection({ statements: 1 });
    const page = await callerFor({ ...t, database: down }, pin).booking.list({});
    expect(page).toBeTruthy();
    expect(down.lost.statements).toBe(1);
  });

  it('booking.create (a command) whose transaction lost its connection answers 503, ran once and wrote nothing', async () => {
    const tenantId = randomUUID();
    const objectId = await projectedObjectOf(t.database, tenantId);
    const { id: deal } = await insertDeal(t, tenantId);
    const { id: program } = await insertProgram(t, tenantId);
    const down = losingConnection({ transactions: 5 });
    await expectTrpcError(
      callerFor({ ...t, database: down }, pin).booking.create({ dealId: deal, propertyObjectId: objectId, programId: program, idempotencyKey: `lost-${randomUUID()}` }),
      'SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE',
    );
    expect(down.lost.transactions).toBe(1);
    const [row] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.bookings WHERE property_object_id = ${objectId}`;
    expect(row!.n).toBe(0);
  });
});

describe('the session lookup of a request (app/api/trpc) that lost its connection', () => {
  it('is run once more: the request is answered, not refused', async () => {
    const restore = routeHandlersOn(t);
    const services = getServices() as { database: Database };
    const pool = services.database;
    try {
      const user = await insertUser(t.database.db, 'pin_manager', null);
      const { token } = await createSession(t.database.db, user.id, 1);
      const down = losingConnection({ statements: 1 });
      services.database = down;
      const { GET } = await import('@/app/api/trpc/[trpc]/route');
      const input = encodeURIComponent(JSON.stringify(superjson.serialize({})));
      const res = await GET(new Request(`http://localhost/api/trpc/booking.list?input=${input}`, { headers: { cookie: `${SESSION_COOKIE}=${token}` } }));
      expect(res.status, await res.clone().text()).toBe(200);
      expect(down.lost.statements).toBe(1);
    } finally {
      services.database = pool;
      await restore();
    }
  });
});

describe('DATABASE_READ_URL', () => {
  it('is optional and must be a postgres:// URL when set', () => {
    const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', KAFKA_BROKERS: '127.0.0.1:9092' };
    expect(parseEnv(base).DATABASE_READ_URL).toBe('');
    expect(parseEnv({ ...base, DATABASE_READ_URL: 'postgres://u@127.0.0.1:5433/db' }).DATABASE_READ_URL).toBe('postgres://u@127.0.0.1:5433/db');
    expect(() => parseEnv({ ...base, DATABASE_READ_URL: 'http://replica/db' })).toThrow(/DATABASE_READ_URL/);
  });

  it('DATABASE_URL: a multi-host URL names target_session_attrs=primary, never read-write', () => {
    const hosts = 'postgres://u@127.0.0.1:5432,127.0.0.1:5433/db';
    const base = { KAFKA_BROKERS: '127.0.0.1:9092' };
    expect(parseEnv({ ...base, DATABASE_URL: `${hosts}?target_session_attrs=primary` }).DATABASE_URL).toBe(`${hosts}?target_session_attrs=primary`);
    expect(() => parseEnv({ ...base, DATABASE_URL: `${hosts}?target_session_attrs=read-write` })).toThrow(/DATABASE_URL .*target_session_attrs=primary/);
    expect(() => parseEnv({ ...base, DATABASE_URL: `${hosts}?sslmode=disable&target_session_attrs=read-write` })).toThrow(/DATABASE_URL/);
  });

  it('readDatabaseOf: the replica when one is configured, the primary otherwise', () => {
    expect(readDatabaseOf({ database: t.database })).toBe(t.database);
    expect(readDatabaseOf({ database: t.database, readDatabase: other.database })).toBe(other.database);
  });

  it('the ops dashboard reads its figures from the read database, and says where it read and how far behind', async () => {
    const now = Date.now();
    // stuck holds only in the "replica" (another database): the dashboard must show them, not the primary's none
    const w = await insertWorld(other.database, 'Replica');
    await insertObject(other.database, w, { status: 'Reserved', timer: new Date(now - 3 * 60 * MIN) });
    const ops = (readDatabase?: Database) => createCallerFactory(opsRouter)(createContextFor(
      { database: t.database, ...(readDatabase ? { readDatabase } : {}), env: t.env, logger: t.logger }, actor('ops', null))).dashboard;
    const fromPrimary = await ops().overview();
    const fromReplica = await ops(other.database).overview();
    expect(fromPrimary.stuckHolds.pastGrace).toBe(0);
    expect(fromReplica.stuckHolds.pastGrace).toBe(1);
    expect((await ops(other.database).stuckHolds()).rows).toHaveLength(1);
    expect((await ops().stuckHolds()).rows).toHaveLength(0);
    // neither test database is a standby: read from a primary, no lag to show
    expect(fromReplica.replication).toEqual({ readFrom: 'primary', lagSeconds: null });
    // the overview's samples are a write: they go to the primary even when the figures come from the replica
    const [samples] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ops.metric_samples`;
    const [onReplica] = await other.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ops.metric_samples`;
    expect(samples!.n).toBeGreaterThan(0);
    expect(onReplica!.n).toBe(0);
  });
});
