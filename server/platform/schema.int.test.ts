import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness/harness';

/** The migration creates every table and index of DESIGN.md; asserted from pg_catalog. */
let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });

const DESIGN_TABLES = [
  'crm.deals', 'crm.booking_programs', 'crm.bookings', 'crm.booking_timeline', 'crm.outbox',
  'chessboard.projects', 'chessboard.buildings', 'chessboard.property_objects', 'chessboard.inbox', 'chessboard.outbox',
  'catalog.project_cards', 'catalog.property_object_cards', 'catalog.property_object_display_overrides',
  'catalog.building_display_overrides', 'catalog.developer_ranking_rules', 'catalog.inbox',
  'ops.job_runs',
];

async function columns(table: string): Promise<string[]> {
  const [schema, name] = table.split('.');
  const rows = await t.database.sql<{ column_name: string }[]>`
    SELECT column_name FROM information_schema.columns WHERE table_schema = ${schema} AND table_name = ${name}`;
  return rows.map((r) => r.column_name);
}

async function indexDef(name: string): Promise<string | undefined> {
  const rows = await t.database.sql<{ def: string }[]>`
    SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = ${name}`;
  return rows[0]?.def;
}

describe('migration', () => {
  it('creates every table of DESIGN.md', async () => {
    const rows = await t.database.sql<{ t: string }[]>`
      SELECT n.nspname || '.' || c.relname AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND n.nspname IN ('crm', 'chessboard', 'catalog', 'ops')`;
    const existing = rows.map((r) => r.t);
    for (const table of DESIGN_TABLES) expect(existing, table).toContain(table);
  });

  it('has the key columns of property_objects, bookings, outbox, inbox and job_runs', async () => {
    expect(await columns('chessboard.property_objects')).toEqual(expect.arrayContaining([
      'id', 'tenant_id', 'project_id', 'building_id', 'section', 'floor', 'number', 'rooms', 'area', 'price', 'status',
      'reserved_until', 'booked_until', 'hold_deal_id', 'status_source', 'status_changed_at', 'updated_at', 'version',
    ]));
    expect(await columns('crm.bookings')).toEqual(expect.arrayContaining([
      'id', 'tenant_id', 'deal_id', 'property_object_id', 'program_id', 'status', 'reserve_expires_at',
      'booking_expires_at', 'booked_at', 'payment_status', 'version', 'created_at', 'updated_at',
    ]));
    for (const outbox of ['crm.outbox', 'chessboard.outbox']) {
      expect(await columns(outbox)).toEqual(expect.arrayContaining([
        'id', 'message_id', 'topic', 'key', 'aggregate_type', 'aggregate_id', 'payload', 'headers', 'created_at',
        'published_at', 'attempts', 'last_error',
      ]));
    }
    for (const inbox of ['chessboard.inbox', 'catalog.inbox']) {
      expect(await columns(inbox)).toEqual(expect.arrayContaining(['consumer', 'message_id', 'processed_at', 'result']));
    }
    expect(await columns('ops.job_runs')).toEqual(expect.arrayContaining(['job', 'run_id', 'started_at', 'finished_at', 'status', 'summary', 'error']));
  });

  it('creates the partial indexes with their predicates', async () => {
    expect(await indexDef('ix_property_objects_reserved_until')).toMatch(/ON chessboard\.property_objects USING btree \(reserved_until, id\) WHERE \(reserved_until IS NOT NULL\)/);
    expect(await indexDef('ix_property_objects_booked_until')).toMatch(/ON chessboard\.property_objects USING btree \(booked_until, id\) WHERE \(booked_until IS NOT NULL\)/);
    const ux = await indexDef('ux_bookings_active_property_object');
    expect(ux).toMatch(/^CREATE UNIQUE INDEX ux_bookings_active_property_object ON crm\.bookings USING btree \(property_object_id\)/);
    expect(ux).toMatch(/WHERE \(status = ANY \(ARRAY\['Reserved'::text, 'AwaitingPayment'::text, 'Booked'::text\]\)\)/);
    expect(await indexDef('ix_property_object_cards_delisted_updated_at')).toMatch(/WHERE \(status = 'Delisted'::text\)/);
    expect(await indexDef('ix_crm_outbox_unpublished')).toMatch(/WHERE \(published_at IS NULL\)/);
  });

  it('inbox primary key is (consumer, message_id)', async () => {
    const rows = await t.database.sql<{ def: string }[]>`
      SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'chessboard.inbox'::regclass AND contype = 'p'`;
    expect(rows[0]?.def).toBe('PRIMARY KEY (consumer, message_id)');
  });

  describe('INV-CHS-002 CHECK', () => {
    const tenant = '00000000-0000-4000-8000-000000000001';
    const project = '00000000-0000-4000-8000-000000000002';
    const building = '00000000-0000-4000-8000-000000000003';
    const deal = '00000000-0000-4000-8000-000000000004';
    beforeAll(async () => {
      await t.database.sql`INSERT INTO chessboard.projects (id, tenant_id, name, city) VALUES (${project}, ${tenant}, 'P', 'C')`;
      await t.database.sql`INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors) VALUES (${building}, ${tenant}, ${project}, 'B', 1, 1)`;
    });
    const insert = (status: string, reservedUntil: Date | null, bookedUntil: Date | null, holdDealId: string | null) => t.database.sql`
      INSERT INTO chessboard.property_objects (id, tenant_id, project_id, building_id, section, floor, number, rooms, area, price, status, reserved_until, booked_until, hold_deal_id, status_source)
      VALUES (gen_random_uuid(), ${tenant}, ${project}, ${building}, 1, 1, '1', 1, 30, 100, ${status}, ${reservedUntil?.toISOString() ?? null}::timestamptz, ${bookedUntil?.toISOString() ?? null}::timestamptz, ${holdDealId}::uuid, 'Import')`;

    it('rejects a Reserved row without reserved_until', async () => {
      await expect(insert('Reserved', null, null, deal)).rejects.toThrow(/ck_property_objects_inv_chs_002/);
    });
    it('rejects a Free row with a timer or a hold owner, and a Booked row without its deal', async () => {
      await expect(insert('Free', new Date(), null, null)).rejects.toThrow(/inv_chs_002/);
      await expect(insert('Free', null, null, deal)).rejects.toThrow(/inv_chs_002/);
      await expect(insert('Booked', null, new Date(), null)).rejects.toThrow(/inv_chs_002/);
      await expect(insert('Reserved', new Date(), new Date(), deal)).rejects.toThrow(/inv_chs_002/);
    });
    it('accepts consistent rows', async () => {
      await insert('Free', null, null, null);
      await insert('Reserved', new Date(), null, deal);
      await insert('Booked', null, new Date(), deal);
      await insert('Sold', null, null, null);
    });
  });
});
