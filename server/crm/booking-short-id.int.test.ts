import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { createBookingCommand } from './commands/create-booking';
import { actor, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { bookingIdByPrefix } from './queries';
import { commandContext } from '../platform/command-context';

/** `/bookings/<short id>` resolves the short id lists show to the full id, inside the tenant scope (#19 point 7). */
let t: TestContext;
const TENANT = randomUUID();
const OTHER = randomUUID();
const pin = actor('pin_manager', null);

async function book(tenant: string) {
  const program = await insertProgram(t, tenant);
  const deal = await insertDeal(t, tenant);
  const propertyObjectId = await projectedObjectOf(t.database, tenant);
  return t.database.db.transaction((tx) => createBookingCommand(tx, { dealId: deal.id, propertyObjectId, programId: program.id }, commandContext(pin, randomUUID())));
}

beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

describe('bookingIdByPrefix', () => {
  it('answers the full id for its 8-digit short id, in any case, for a user of its tenant and a PIN manager', async () => {
    const b = await book(TENANT);
    const short = b.id.slice(0, 8);
    expect(await bookingIdByPrefix(t.database.db, actor('developer_manager', TENANT), short)).toBe(b.id);
    expect(await bookingIdByPrefix(t.database.db, actor('viewer', TENANT), short.toUpperCase())).toBe(b.id);
    expect(await bookingIdByPrefix(t.database.db, pin, short)).toBe(b.id);
  });

  it("another tenant's booking is not found (null), as is a prefix no booking has", async () => {
    const b = await book(OTHER);
    expect(await bookingIdByPrefix(t.database.db, actor('developer_manager', TENANT), b.id.slice(0, 8))).toBeNull();
    expect(await bookingIdByPrefix(t.database.db, actor('developer_manager', OTHER), b.id.slice(0, 8))).toBe(b.id);
    await t.database.sql`UPDATE crm.bookings SET id = ${'0000000a-0000-4000-8000-000000000001'} WHERE id = ${b.id}`;
    expect(await bookingIdByPrefix(t.database.db, pin, '0000000b')).toBeNull();
  });

  it('a prefix two bookings share is ambiguous (null: no guess); a malformed one is refused', async () => {
    const [a, b] = [await book(TENANT), await book(TENANT)];
    // crm has no foreign key to a booking id: give b an id that shares a's first 8 digits
    const twin = `${a.id.slice(0, 8)}-ffff-4fff-bfff-ffffffffffff`;
    await t.database.sql`UPDATE crm.bookings SET id = ${twin} WHERE id = ${b.id}`;
    expect(await bookingIdByPrefix(t.database.db, pin, a.id.slice(0, 8))).toBeNull();
    for (const bad of ['xyz', 'abcdef1', 'abcdef123', "abcdef12' OR 1=1", '%%%%%%%%']) {
      await expect(bookingIdByPrefix(t.database.db, pin, bad)).rejects.toThrow();
    }
  });
});
