import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTenant, insertUser } from '../../test/fixtures/auth.fixtures';
import { createSession, SESSION_COOKIE } from '../auth/session';
import { cancelBookingCommand } from '../crm/commands/cancel-booking';
import { createBookingCommand } from '../crm/commands/create-booking';
import { insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { projectedObjectOf } from '../../test/harness/crm-projection';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import { bookingsCsvResponse } from './bookings-csv-http';
import { CSV_COLUMNS, csvField } from './bookings-csv';
import { commandContext } from '../platform/command-context';

/**
 * GET /api/reports/bookings.csv (the handler the route calls): one line per booking created in the
 * period, header first, BOM, RFC 4180 quoting, formula-safe text, tenant scope, the same refusals as
 * reports.funnel, and paging that loses no row when thousands share one created_at.
 */

let t: TestContext;
const T0 = new Date('2031-03-01T10:00:00.000Z');
const HOUR = 3_600_000;
const cookies: Record<'manager' | 'otherManager' | 'agent' | 'pin', string> = { manager: '', otherManager: '', agent: '', pin: '' };
let tenant = '';
let other = '';
const inRange: string[] = [];
const TITLE = 'Иванов, "Солнечный" кв. 12';
const REASON = '=1+2 клиент передумал';

/** a minimal RFC 4180 reader: quoted fields with "" and line breaks inside */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++; } else field += c;
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}

const get = (query: string, who?: keyof typeof cookies) =>
  bookingsCsvResponse(t.database, t.logger, new Request(`http://localhost/api/reports/bookings.csv?${query}`, {
    headers: who ? { cookie: `${SESSION_COOKIE}=${cookies[who]}` } : {},
  }));
const range = (from: Date, to: Date) => `from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`;

beforeAll(async () => {
  t = await createTestContext();
  const db = t.database.db;
  tenant = await insertTenant(db);
  other = await insertTenant(db);
  const users = {
    manager: await insertUser(db, 'developer_manager', tenant),
    otherManager: await insertUser(db, 'developer_manager', other),
    agent: await insertUser(db, 'agent', tenant),
    pin: await insertUser(db, 'pin_manager', null),
  };
  for (const [k, u] of Object.entries(users)) cookies[k as keyof typeof cookies] = (await createSession(db, u.id, 1)).token;
  const program = await insertProgram(t, tenant);
  const otherProgram = await insertProgram(t, other);
  // five bookings an hour apart; the range below takes the middle three
  for (let i = 0; i < 5; i++) {
    const deal = await insertDeal(t, tenant, 'Application', users.agent.id);
    if (i === 2) await t.database.sql`UPDATE crm.deals SET title = ${TITLE} WHERE id = ${deal.id}`;
    const b = await db.transaction(async (tx) =>
      createBookingCommand(tx, { dealId: deal.id, propertyObjectId: await projectedObjectOf(t.database, tenant), programId: program.id },
        commandContext(users.pin.actor, randomUUID(), new Date(T0.getTime() + i * HOUR))));
    if (i === 3) await db.transaction((tx) => cancelBookingCommand(tx, { bookingId: b.id, reason: REASON }, commandContext(users.pin.actor, randomUUID(), new Date(T0.getTime() + i * HOUR + 60_000))));
    if (i >= 1 && i <= 3) inRange.push(b.id);
  }
  // the other tenant's booking inside the same range
  const foreignDeal = await insertDeal(t, other);
  await db.transaction(async (tx) =>
    createBookingCommand(tx, { dealId: foreignDeal.id, propertyObjectId: await projectedObjectOf(t.database, other), programId: otherProgram.id },
      commandContext(users.pin.actor, randomUUID(), new Date(T0.getTime() + 2 * HOUR))));
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('GET /api/reports/bookings.csv', () => {
  const from = new Date(T0.getTime() + HOUR);
  const to = new Date(T0.getTime() + 3 * HOUR + 1);

  it('answers a CSV: BOM, header first, one line per booking of the tenant created in [from, to), never cached', async () => {
    const res = await get(range(from, to), 'manager');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="bookings-2031-03-01--2031-03-01.csv"');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = parseCsv(new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes).slice(1));
    expect(rows[0]).toEqual([...CSV_COLUMNS]);
    const data = rows.slice(1);
    expect(data.map((r) => r[0])).toEqual(inRange);
    expect(data.every((r) => r.length === CSV_COLUMNS.length)).toBe(true);
    const col = (name: (typeof CSV_COLUMNS)[number]) => CSV_COLUMNS.indexOf(name);
    // quoting survives a comma, quotes and Cyrillic; a formula-looking reason is made inert
    expect(data[1]![col('deal_title')]).toBe(TITLE);
    expect(data[2]![col('status')]).toBe('Cancelled');
    expect(data[2]![col('closed_reason')]).toBe(`'${REASON}`);
    expect(data[0]![col('agent_name')]).toBe('agent user');
    expect(data[0]![col('created_at')]).toBe(new Date(T0.getTime() + HOUR).toISOString());
  });

  it('another tenant\'s manager gets the header and nothing of this tenant; a PIN manager picks the tenant', async () => {
    const foreign = parseCsv((await (await get(range(from, to), 'otherManager')).text()).slice(1));
    expect(foreign.slice(1).some((r) => inRange.includes(r[0]!))).toBe(false);
    expect(foreign.length).toBe(2);
    const asking = parseCsv((await (await get(`${range(from, to)}&tenantId=${tenant}`, 'otherManager')).text()).slice(1));
    expect(asking.length).toBe(1);
    const pin = parseCsv((await (await get(`${range(from, to)}&tenantId=${tenant}`, 'pin')).text()).slice(1));
    expect(pin.slice(1).map((r) => r[0])).toEqual(inRange);
  });

  it('refuses like reports.funnel: 401 without a session, 403 for an agent, 400 for a bad period — as JSON, not a CSV', async () => {
    expect((await get(range(from, to))).status).toBe(401);
    const forbidden = await get(range(from, to), 'agent');
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ error: { domainCode: 'REPORTS_FORBIDDEN' } });
    for (const q of [range(to, from), 'from=yesterday&to=today', range(from, new Date(from.getTime() + 400 * 24 * HOUR)), '']) {
      const bad = await get(q, 'manager');
      expect(bad.status, q).toBe(400);
      expect(bad.headers.get('cache-control')).toBe('no-store');
      expect(await bad.json()).toMatchObject({ error: { domainCode: 'VALIDATION_ERROR' } });
    }
  });

  it('pages through thousands of bookings created at the same instants without losing or repeating one', async () => {
    const at = new Date('2031-06-01T00:00:00.000Z');
    const deal = await insertDeal(t, tenant);
    await t.database.sql`INSERT INTO crm.bookings (id, tenant_id, deal_id, property_object_id, program_id, status, reserve_expires_at, payment_status, created_at, updated_at)
      SELECT gen_random_uuid(), ${tenant}, ${deal.id}, gen_random_uuid(), (SELECT id FROM crm.booking_programs WHERE tenant_id = ${tenant} LIMIT 1),
             'Cancelled', ts, 'NotRequired', ts, ts
      FROM generate_series(1, 2500) g, LATERAL (SELECT ${at.toISOString()}::timestamptz + (g % 3) * interval '1 second' AS ts) x`;
    const rows = parseCsv((await (await get(range(at, new Date(at.getTime() + HOUR)), 'manager')).text()).slice(1)).slice(1);
    expect(rows.length).toBe(2500);
    expect(new Set(rows.map((r) => r[0])).size).toBe(2500);
  });
});

describe('csvField', () => {
  it('quotes separators, quotes and line breaks, and defuses formulas in free text only', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('=SUM(A1)', true)).toBe("'=SUM(A1)");
    expect(csvField('-5', true)).toBe("'-5");
    expect(csvField(null)).toBe('');
    expect(csvField(false)).toBe('false');
    // with semicolons, a semicolon is what needs quoting and a comma does not
    expect(csvField('a;b', false, ';')).toBe('"a;b"');
    expect(csvField('a,b', false, ';')).toBe('a,b');
  });

  it('?sep=semicolon: the same lines with semicolons (spreadsheets in a Russian locale); any other sep is a 400', async () => {
    const [from, to] = [new Date(T0.getTime() + HOUR), new Date(T0.getTime() + 3 * HOUR + 1)];
    const decode = async (r: Response) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(await r.arrayBuffer()).slice(1);
    const comma = parseCsv(await decode(await get(range(from, to), 'manager')));
    const res = await get(`${range(from, to)}&sep=semicolon`, 'manager');
    expect(res.status).toBe(200);
    const text = await decode(res);
    expect(text.startsWith(`${CSV_COLUMNS.join(';')}\r\n`)).toBe(true);
    // swapping the two characters turns it into a comma file whose fields are the comma file's, swapped too
    const swap = (x: string) => x.replace(/[,;]/g, (c) => (c === ',' ? ';' : ','));
    expect(parseCsv(swap(text))).toEqual(comma.map((row) => row.map(swap)));
    expect(comma.length).toBeGreaterThan(3);
    const bad = await get(`${range(from, to)}&sep=tab`, 'manager');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { domainCode: 'VALIDATION_ERROR' } });
  });
});
