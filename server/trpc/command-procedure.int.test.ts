import { randomUUID } from 'node:crypto';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import superjson from 'superjson';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { actor, crmRowCounts, expectTrpcError, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import type { Actor } from '../auth/actor';
import type { BookingRecord } from '../crm/booking';
import { createBookingCommand, createBookingInput, createBookingOutput } from '../crm/commands/create-booking';
import type { CommandContext } from '../platform/command-context';
import type { Database } from '../platform/db';
import { AppError } from '../platform/errors';
import { commandProcedure } from './command-procedure';
import { createContextFor } from './context';
import { createCallerFactory, router } from './init';

/**
 * The one command procedure, on a router of its own around crm's create-booking command (a real state
 * change with its timeline and outbox rows): one transaction, the context's metrics only after the commit
 * and not for a replay, one log line of ids, and an answer that does not match its output schema is an error.
 */
let t: TestContext;
let program: { id: string };
const TENANT = randomUUID();
const pin = actor('pin_manager', null);
const agent = actor('agent', TENANT);

/** what happened, in order: transactions opened and committed, the context's metric hooks */
let events: string[];

const testCommand = {
  roles: ['pin_manager'] as const,
  input: createBookingInput,
  output: createBookingOutput,
  logMessage: 'test command applied',
  logFields: (b: BookingRecord) => ({ bookingId: b.id, status: b.status, version: b.version }),
  onApplied: (name: string, _cctx: CommandContext<Actor>, b: BookingRecord) => events.push(`applied ${name} ${b.status}`),
  onFailed: (name: string, e: unknown) => events.push(`failed ${name} ${e instanceof AppError ? e.code : 'error'}`),
};

const testRouter = router({
  create: commandProcedure({ ...testCommand, name: 'test.create', handler: createBookingCommand }),
  createThenRefuse: commandProcedure({
    ...testCommand, name: 'test.createThenRefuse',
    handler: async (tx, input, cctx) => {
      await createBookingCommand(tx, input, cctx);
      throw new AppError('TEST_REFUSED_AFTER_WRITING', 'CONFLICT', 'refused after the booking, its timeline and its outbox row were written');
    },
  }),
  answerOffSchema: commandProcedure({
    ...testCommand, name: 'test.answerOffSchema',
    // a status the schema does not know: the answer must not reach the caller as it is
    handler: async (tx, input, cctx) => ({ ...(await createBookingCommand(tx, input, cctx)), status: 'Lost' }) as unknown as BookingRecord,
  }),
});

/** the test database, its transactions observed: each one opened and each one committed is an event */
function observedDatabase(): Database {
  const db = t.database.db;
  const transaction: typeof db.transaction = async (fn, config) => {
    events.push('begin');
    const result = await db.transaction(fn, config);
    events.push('commit');
    return result;
  };
  return { ...t.database, db: Object.assign(Object.create(db), { transaction }) };
}

const contextFor = (who: Actor) => createContextFor({ database: observedDatabase(), env: t.env, logger: t.logger }, who);
const callerFor = (who: Actor) => createCallerFactory(testRouter)(contextFor(who));

async function bookingInput(extra: { idempotencyKey?: string } = {}) {
  const deal = await insertDeal(t, TENANT);
  return { dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, TENANT), programId: program.id, ...extra };
}

const linesOf = (bookingId: string) => t.logLines().filter((l) => l.msg === 'test command applied' && l.bookingId === bookingId);

beforeAll(async () => {
  t = await createTestContext();
  program = await insertProgram(t, TENANT);
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  events = [];
});

describe('commandProcedure', () => {
  it('runs the command in one transaction, then records its metrics and one log line of ids', async () => {
    const input = await bookingInput({ idempotencyKey: `test-${randomUUID()}` });
    const booking = await callerFor(pin).create(input);
    expect(booking).toMatchObject({ dealId: input.dealId, status: 'Reserved' });
    expect(booking.createdAt).toBeInstanceOf(Date);
    // one transaction, and the metrics only once it committed
    expect(events).toEqual(['begin', 'commit', 'applied test.create Reserved']);
    const lines = linesOf(booking.id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ command: 'test.create', bookingId: booking.id, status: 'Reserved', version: 1, replayed: false });
    // ids and statuses only: nothing of the input beyond what the result names
    expect(JSON.stringify(lines[0])).not.toContain(input.idempotencyKey);
  });

  it('an idempotent replay answers the first result without recording the metrics again', async () => {
    const input = await bookingInput({ idempotencyKey: `test-${randomUUID()}` });
    const first = await callerFor(pin).create(input);
    events = [];
    const before = await crmRowCounts(t);
    expect(await callerFor(pin).create(input)).toEqual(first);
    expect(await crmRowCounts(t)).toEqual(before);
    expect(events).toEqual(['begin', 'commit']);
    expect(linesOf(first.id).map((l) => l.replayed)).toEqual([false, true]);
  });

  it('a command that fails after writing leaves nothing: state, timeline and outbox roll back together', async () => {
    const input = await bookingInput();
    const before = await crmRowCounts(t);
    await expectTrpcError(callerFor(pin).createThenRefuse(input), 'CONFLICT', 'TEST_REFUSED_AFTER_WRITING');
    expect(await crmRowCounts(t)).toEqual(before);
    expect(events).toEqual(['begin', 'failed test.createThenRefuse TEST_REFUSED_AFTER_WRITING']);
    expect(t.logLines().filter((l) => l.command === 'test.createThenRefuse')).toEqual([]);
  });

  it('an answer that does not match the output schema is an error, a plain 500 over HTTP', async () => {
    const error = await expectTrpcError(callerFor(pin).answerOffSchema(await bookingInput()), 'INTERNAL_SERVER_ERROR');
    expect((error as Error).message).toMatch(/output validation/i);

    const response = await fetchRequestHandler({
      endpoint: '/api/trpc',
      req: new Request('http://localhost/api/trpc/answerOffSchema', {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(superjson.serialize(await bookingInput())),
      }),
      router: testRouter,
      createContext: () => contextFor(pin),
    });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { json: { message: string; data: Record<string, unknown> } } };
    expect(body.error.json.message).toBe('Internal server error');
    expect(body.error.json.data).toMatchObject({ code: 'INTERNAL_SERVER_ERROR', domainCode: null });
    expect(body.error.json.data.fields ?? null).toBeNull();
  });

  it('checks the role and the input before opening a transaction: typed errors, never a 500', async () => {
    await expectTrpcError(callerFor(agent).create(await bookingInput()), 'FORBIDDEN');
    await expectTrpcError(callerFor(pin).create({ dealId: 'not-a-uuid', propertyObjectId: randomUUID(), programId: program.id }), 'BAD_REQUEST');
    expect(events).toEqual([]);
  });
});
