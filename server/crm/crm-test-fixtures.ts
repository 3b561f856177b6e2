/**
 * Test fixtures of crm (used by *.int.test.ts only): deals, programs, actors, callers and outbox reads.
 * Not the project's seed (scripts/seed.ts).
 */
import { randomUUID } from 'node:crypto';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { asc, eq } from 'drizzle-orm';
import superjson from 'superjson';
import { expect } from 'vitest';
import type { Actor, Role } from '../auth/actor';
import { createKafka } from '../platform/kafka/client';
import type { JobContext } from '../platform/jobs/types';
import type { TestContext } from '../testing/harness';
import { createContextFor } from '../trpc/context';
import { appRouter, createCaller } from '../trpc/root';
import { bookingPrograms, bookings, bookingTimeline, crmOutbox, deals } from './schema';
import type { DealStatus } from './deal';

export const actor = (role: Role, tenantId: string | null, userId: string = randomUUID()): Actor => ({ userId, role, tenantId });

export function callerFor(t: TestContext, who: Actor, correlationId: string = randomUUID()) {
  return createCaller(createContextFor({ database: t.database, env: t.env, logger: t.logger }, who, { correlationId }));
}

export async function insertDeal(t: TestContext, tenantId: string, status: DealStatus = 'Application', agentId: string | null = null) {
  const [deal] = await t.database.db
    .insert(deals)
    .values({ id: randomUUID(), tenantId, title: 'Deal', agentId, status })
    .returning();
  return deal!;
}

export async function insertProgram(
  t: TestContext,
  tenantId: string,
  terms: { isPaid?: boolean; reserveDurationMinutes?: number; bookingDurationHours?: number } = {},
) {
  const [program] = await t.database.db
    .insert(bookingPrograms)
    .values({
      id: randomUUID(),
      tenantId,
      name: terms.isPaid ? 'Paid' : 'Free',
      isPaid: terms.isPaid ?? false,
      reserveDurationMinutes: terms.reserveDurationMinutes ?? 60,
      bookingDurationHours: terms.bookingDurationHours ?? 48,
    })
    .returning();
  return program!;
}

export async function outboxOf(t: TestContext, aggregateId: string) {
  return t.database.db.select().from(crmOutbox).where(eq(crmOutbox.aggregateId, aggregateId)).orderBy(asc(crmOutbox.id));
}

export async function timelineOf(t: TestContext, bookingId: string) {
  return t.database.db.select().from(bookingTimeline).where(eq(bookingTimeline.bookingId, bookingId)).orderBy(asc(bookingTimeline.id));
}

export async function bookingRow(t: TestContext, bookingId: string) {
  const [row] = await t.database.db.select().from(bookings).where(eq(bookings.id, bookingId));
  return row!;
}

export async function dealRow(t: TestContext, dealId: string) {
  const [row] = await t.database.db.select().from(deals).where(eq(deals.id, dealId));
  return row!;
}

/** Row counts of every crm table a command writes: "no row written" compares two of these. */
export async function crmRowCounts(t: TestContext) {
  const [r] = await t.database.sql<{ bookings: number; timeline: number; outbox: number; keys: number; deals: string }[]>`
    SELECT (SELECT count(*)::int FROM crm.bookings) AS bookings,
           (SELECT count(*)::int FROM crm.booking_timeline) AS timeline,
           (SELECT count(*)::int FROM crm.outbox) AS outbox,
           (SELECT count(*)::int FROM crm.idempotency_keys) AS keys,
           (SELECT string_agg(id::text || ':' || status || ':' || version, ',' ORDER BY id) FROM crm.deals) AS deals`;
  return r!;
}

/** Asserts a rejected tRPC call: its tRPC code and the domain code of its AppError cause. */
export async function expectTrpcError(call: Promise<unknown>, code: string, domainCode?: string) {
  const error = await call.then(
    () => {
      throw new Error(`expected ${code}${domainCode ? `/${domainCode}` : ''}, the call succeeded`);
    },
    (e: unknown) => e as { code?: string; cause?: { code?: string } },
  );
  expect(error.code, JSON.stringify({ code: error.code, cause: error.cause?.code })).toBe(code);
  if (domainCode) expect(error.cause?.code).toBe(domainCode);
  return error;
}

/**
 * One call through the real HTTP adapter (fetch handler + superjson), to assert what a browser gets:
 * the tRPC error shape with data.domainCode.
 */
export async function httpCall(t: TestContext, who: Actor | null, path: string, input: unknown, type: 'query' | 'mutation') {
  const url = new URL(`http://localhost/api/trpc/${path}`);
  let request: Request;
  if (type === 'query') {
    url.searchParams.set('input', JSON.stringify(superjson.serialize(input)));
    request = new Request(url, { method: 'GET' });
  } else {
    request = new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(superjson.serialize(input)) });
  }
  const response = await fetchRequestHandler({
    endpoint: '/api/trpc',
    req: request,
    router: appRouter,
    createContext: () => createContextFor({ database: t.database, env: t.env, logger: t.logger }, who),
  });
  const body = (await response.json()) as { error?: { json: { data: { code: string; domainCode: string | null; httpStatus: number } } }; result?: unknown };
  return { status: response.status, error: body.error?.json.data, body };
}

export function jobContext(t: TestContext, signal: AbortSignal = new AbortController().signal): JobContext {
  return {
    database: t.database,
    env: t.env,
    logger: t.logger,
    runId: randomUUID(),
    signal,
    trigger: 'manual',
    kafka: createKafka(t.env),
  };
}
