import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectObjects } from '../../test/harness/crm-projection';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { createBookingCommand } from './commands/create-booking';
import { actor, callerFor, crmRowCounts, expectTrpcError, httpCall, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { commandContext } from '../platform/command-context';

/**
 * DESIGN decision 8: CreateBooking books only what crm's own view of the objects (crm.property_objects)
 * allows. Another tenant's, a deleted and an unknown object are one indistinguishable NOT_FOUND; Sold
 * and Hidden have their own conflicts; nothing is written by a refusal.
 */

let t: TestContext;
const A = randomUUID();
const B = randomUUID();
let programA: { id: string };
const agentA = actor('agent', A);
const pin = actor('pin_manager', null);
const ids = { free: randomUUID(), foreign: randomUUID(), deleted: randomUUID(), sold: randomUUID(), hidden: randomUUID(), reserved: randomUUID(), booked: randomUUID() };

beforeAll(async () => {
  t = await createTestContext();
  programA = await insertProgram(t, A);
  await projectObjects(t.database, [
    { id: ids.free, tenantId: A },
    { id: ids.foreign, tenantId: B },
    { id: ids.deleted, tenantId: A, deleted: true },
    { id: ids.sold, tenantId: A, status: 'Sold' },
    { id: ids.hidden, tenantId: A, status: 'Hidden' },
    // a hold without an active crm booking (a lost release): decision 7 moves it, so it stays bookable
    { id: ids.reserved, tenantId: A, status: 'Reserved' },
    { id: ids.booked, tenantId: A, status: 'Booked' },
  ]);
});
afterAll(async () => {
  await t?.close();
});

describe('CreateBooking against crm.property_objects (DESIGN decision 8)', () => {
  it('another tenant\'s, a deleted and an unknown object: the same NOT_FOUND body over HTTP, nothing written', async () => {
    const deal = await insertDeal(t, A);
    const before = await crmRowCounts(t);
    const bodies: string[] = [];
    for (const id of [ids.foreign, ids.deleted, randomUUID()]) {
      const res = await httpCall(t, agentA, 'booking.create', { dealId: deal.id, propertyObjectId: id, programId: programA.id }, 'mutation');
      expect(res.status).toBe(404);
      expect(res.error).toMatchObject({ code: 'NOT_FOUND', domainCode: 'CRM_PROPERTY_OBJECT_NOT_FOUND' });
      // the body names only the id that was asked for: with it masked, the three answers are byte-identical
      bodies.push(JSON.stringify(res.body).replaceAll(id, '<asked id>'));
    }
    expect(new Set(bodies).size).toBe(1);
    expect(await crmRowCounts(t)).toEqual(before);
  });

  it('a pin_manager cannot book tenant B\'s object for tenant A\'s deal (the object must be the deal\'s tenant\'s)', async () => {
    const deal = await insertDeal(t, A);
    const before = await crmRowCounts(t);
    await expectTrpcError(callerFor(t, pin).booking.create({ dealId: deal.id, propertyObjectId: ids.foreign, programId: programA.id }), 'NOT_FOUND', 'CRM_PROPERTY_OBJECT_NOT_FOUND');
    expect(await crmRowCounts(t)).toEqual(before);
  });

  it('Sold → CRM_BOOKING_PROPERTY_OBJECT_SOLD, Hidden → CRM_BOOKING_PROPERTY_OBJECT_HIDDEN (409), nothing written', async () => {
    const deal = await insertDeal(t, A);
    const before = await crmRowCounts(t);
    const sold = await httpCall(t, agentA, 'booking.create', { dealId: deal.id, propertyObjectId: ids.sold, programId: programA.id }, 'mutation');
    expect(sold).toMatchObject({ status: 409, error: { code: 'CONFLICT', domainCode: 'CRM_BOOKING_PROPERTY_OBJECT_SOLD' } });
    const hidden = await httpCall(t, agentA, 'booking.create', { dealId: deal.id, propertyObjectId: ids.hidden, programId: programA.id }, 'mutation');
    expect(hidden).toMatchObject({ status: 409, error: { code: 'CONFLICT', domainCode: 'CRM_BOOKING_PROPERTY_OBJECT_HIDDEN' } });
    expect(await crmRowCounts(t)).toEqual(before);
  });

  it('a Free object of the deal\'s tenant is booked; a Reserved/Booked one without an active crm booking too (decision 7 takes the hold over)', async () => {
    for (const id of [ids.free, ids.reserved, ids.booked]) {
      const deal = await insertDeal(t, A);
      const booking = await callerFor(t, agentA).booking.create({ dealId: deal.id, propertyObjectId: id, programId: programA.id });
      expect(booking).toMatchObject({ status: 'Reserved', propertyObjectId: id, tenantId: A });
    }
  });

  it('the three NOT_FOUND cases run the very same statements (no timing oracle by construction)', async () => {
    // a client of its own whose debug hook records every statement text sent (parameters are not part of it)
    const statements: string[] = [];
    const parameters: unknown[][] = [];
    const client = postgres(t.url, {
      max: 1, onnotice: () => {}, debug: (_conn, query, params) => { statements.push(query); parameters.push([...params]); },
    });
    const db = drizzle(client);
    try {
      await client`SELECT 1`; // the connection's own start-up queries (array types) are not the command's
      const traces: string[][] = [];
      const bound: string[] = [];
      for (const id of [ids.foreign, ids.deleted, randomUUID()]) {
        const deal = await insertDeal(t, A);
        statements.length = 0;
        parameters.length = 0;
        const error = await db.transaction((tx) => createBookingCommand(tx, { dealId: deal.id, propertyObjectId: id, programId: programA.id }, commandContext(agentA, randomUUID())))
          .then(() => null, (e: unknown) => e as { code?: string });
        expect(error?.code).toBe('CRM_PROPERTY_OBJECT_NOT_FOUND');
        traces.push([...statements]);
        // the bound values too: with the deal and the asked id masked, the three runs send the same values
        bound.push(JSON.stringify(parameters).replaceAll(id, '<asked id>').replaceAll(deal.id, '<deal>'));
      }
      expect(traces[0]!.length).toBeGreaterThan(2);
      expect(traces[0]!.some((s) => s.includes('"crm"."property_objects"'))).toBe(true);
      expect(traces[1]).toEqual(traces[0]);
      expect(traces[2]).toEqual(traces[0]);
      expect(bound[0]).toContain('<asked id>');
      expect(bound[1]).toBe(bound[0]);
      expect(bound[2]).toBe(bound[0]);
    } finally {
      await client.end({ timeout: 1 });
    }
  });
});
