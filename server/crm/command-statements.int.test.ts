import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { confirmBookingCommand } from './commands/confirm-booking';
import { createBookingCommand } from './commands/create-booking';
import { actor, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { commandContext } from '../platform/command-context';

/**
 * The hot command path runs its statements as named, prepared statements (platform/db.ts): an unnamed
 * one costs postgres.js two round trips and stops the statements sent beside it from being pipelined
 * (issue #17). Asserted from pg_prepared_statements of the transaction's connection.
 */
let t: TestContext;
const TENANT = randomUUID();
let program: { id: string };
beforeAll(async () => {
  t = await createTestContext();
  program = await insertProgram(t, TENANT, { isPaid: false, reserveDurationMinutes: 60, bookingDurationHours: 48 });
});
afterAll(async () => {
  await t?.close();
});

describe('booking.create and booking.confirm statements', () => {
  it('every read and write of the two commands is a prepared statement', async () => {
    const agent = actor('agent', TENANT);
    const deal = await insertDeal(t, TENANT, 'Application');
    const propertyObjectId = await projectedObjectOf(t.database, TENANT);
    const statements = await t.database.db.transaction(async (tx) => {
      const booking = await createBookingCommand(tx, { dealId: deal.id, propertyObjectId, programId: program.id }, commandContext(agent, randomUUID()));
      await confirmBookingCommand(tx, { bookingId: booking.id, expectedVersion: booking.version }, commandContext(agent, randomUUID()));
      const rows = (await tx.execute(sql`SELECT statement FROM pg_prepared_statements WHERE NOT from_sql`)) as unknown as { statement: string }[];
      return rows.map((r) => r.statement.replace(/\s+/g, ' '));
    });
    const has = (pattern: RegExp) => expect(statements.some((s) => pattern.test(s)), String(pattern)).toBe(true);
    has(/from "crm"\."deals" where .* for update/i);
    has(/from "crm"\."booking_programs" where "crm"\."booking_programs"\."id" = \$1$/i);
    has(/from "crm"\."property_objects" where/i);
    has(/insert into "crm"\."bookings"/i);
    has(/update "crm"\."deals" set/i);
    has(/insert into "crm"\."outbox"/i);
    has(/pg_notify/i);
    has(/insert into "crm"\."booking_timeline"/i);
    has(/from "crm"\."bookings" where .* for update/i);
    has(/from "crm"\."booking_programs" where "crm"\."booking_programs"\."id" = \(select/i);
    has(/update "crm"\."bookings" set/i);
  });
});
