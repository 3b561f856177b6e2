import { createHash } from 'node:crypto';
import postgres from 'postgres';
import { seed } from './seed';
import { TENANTS, idFor } from './seed-data';

/**
 * `npm run db:seed -- --scale target`: the demo seed plus the load the specs name as their target
 * (hold-expiration at 1,000,000 objects, the saga at up to 10,000 active bookings), for trying the
 * console and benching it at scale.
 *
 * Built with set-based SQL (INSERT … SELECT over generate_series) in ONE transaction: a million rows
 * written from JavaScript would take the better part of an hour, and one transaction means a run that
 * fails half-way leaves nothing behind, so "the marker project exists" is a complete idempotency test.
 * Ids are derived from names (md5, shaped as RFC 4122 v4 so zod's uuid accepts them).
 *
 * What crm and chessboard hold agrees exactly (the reconciliation finds nothing among these rows): every
 * active booking's object is held by its deal and booking with the booking's own timer; every ended
 * booking's object is Free (or Sold for a completed sale); crm's projection of the objects has each
 * object's status and version. Every row is older than the reconciliation's settle window, so that the
 * reconciliation does compare them. Timers of the active bookings lie 2 h to 2 days ahead of the run,
 * so that the expiration jobs have nothing to do right after seeding.
 *
 * Not made at this scale: the deal chats and notifications of these bookings (the demo seed makes them
 * from replayed events; a million-object demo needs none to be read), and chessboard outbox events
 * (catalog cards are written directly, as the demo seed does for its Delisted ones).
 */

export interface TargetSeedOptions {
  /** chessboard property objects to create, in buildings of 25 floors × 4 sections × 10 */
  objects: number;
  /** active crm bookings (Reserved, AwaitingPayment and Booked) */
  activeBookings: number;
  /** ended crm bookings (Completed, ReserveExpired, BookingExpired, Cancelled) */
  endedBookings: number;
  /** the moment the timers are relative to (tests) */
  now?: Date;
}

export const TARGET_SCALE: TargetSeedOptions = { objects: 1_000_000, activeBookings: 10_000, endedBookings: 10_000 };

export const TARGET_LAYOUT = { floors: 25, sections: 4, perFloor: 10, buildingsPerProject: 10 } as const;
const CELLS = TARGET_LAYOUT.floors * TARGET_LAYOUT.sections * TARGET_LAYOUT.perFloor;

export interface TargetSeedResult {
  inserted: boolean;
  objects: number;
  buildings: number;
  projects: number;
  activeBookings: number;
  endedBookings: number;
  delistedCards: number;
  jobRuns: number;
  durationMs: number;
}

/** The id the seed gives to a name (the SQL function pg_temp.target_uid computes the same). */
export function targetId(name: string): string {
  const h = createHash('md5').update(`pin-target:${name}`).digest('hex');
  const x = `${h.slice(0, 12)}4${h.slice(13, 16)}8${h.slice(17, 32)}`;
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

const TARGET_TABLES = ['chessboard.property_objects', 'chessboard.projects', 'chessboard.buildings', 'chessboard.property_object_status_history',
  'crm.bookings', 'crm.deals', 'crm.booking_timeline', 'crm.property_objects', 'catalog.property_object_cards', 'catalog.project_cards', 'ops.job_runs'];

const tenantA = TENANTS[0].id;
const tenantB = TENANTS[1].id;

export async function seedTarget(url: string, opts: TargetSeedOptions, log: (l: string) => void = console.log): Promise<TargetSeedResult> {
  for (const [k, v] of Object.entries({ objects: opts.objects, activeBookings: opts.activeBookings, endedBookings: opts.endedBookings })) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`invalid target seed option ${k}: ${String(v)} (a whole number ≥ 0)`);
  }
  const totalBookings = opts.activeBookings + opts.endedBookings;
  if (opts.objects < CELLS) throw new Error(`invalid target seed option objects: ${opts.objects} (at least one building, ${CELLS})`);
  if (totalBookings * 2 > opts.objects) throw new Error(`invalid target seed: ${totalBookings} bookings need at least ${totalBookings * 2} objects`);
  const started = performance.now();
  // the demo seed first: tenants, users, booking programs and the demo's own scenarios
  await seed(url, log);

  const buildings = Math.ceil(opts.objects / CELLS);
  const objects = buildings * CELLS;
  const projects = Math.ceil(buildings / TARGET_LAYOUT.buildingsPerProject);
  const delistedCards = Math.floor(objects / 100);
  const now = opts.now ?? new Date();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const step = async <T>(what: string, f: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const r = await f();
    log(`[seed:target] ${what} (${Math.round(performance.now() - t0)} ms)`);
    return r;
  };
  try {
    const result = await sql.begin(async (tx) => {
      // two runs at once would both find no marker: the second waits here, then finds it
      await tx`SELECT pg_advisory_xact_lock(hashtext('pin-seed-target'))`;
      await tx`CREATE FUNCTION pg_temp.target_uid(text) RETURNS uuid LANGUAGE sql IMMUTABLE AS
        $$ SELECT (overlay(overlay(md5('pin-target:' || $1) placing '4' from 13) placing '8' from 17))::uuid $$`;
      const [{ present }] = await tx`SELECT EXISTS (SELECT 1 FROM chessboard.projects WHERE id = pg_temp.target_uid('project:0')) AS present`;
      if (present) return null;

      const nowTs = now.toISOString();
      const agentA = idFor('user:agent@pin.local');
      const agentB = idFor('user:agent-b@pin.local');
      const stride = Math.floor(objects / Math.max(1, totalBookings));

      await step(`${projects} projects, ${buildings} buildings`, async () => {
        await tx`INSERT INTO chessboard.projects (id, tenant_id, name, city, version, updated_at)
          SELECT pg_temp.target_uid('project:' || p),
                 CASE WHEN p % 3 = 2 THEN ${tenantB}::uuid ELSE ${tenantA}::uuid END,
                 'ЖК «' || (ARRAY['Северный парк', 'Речной квартал', 'Зелёная долина', 'Солнечный берег', 'Новые горизонты', 'Лесная поляна', 'Морской фасад', 'Старый город'])[1 + p % 8] || '» ' || (p / 8 + 1) || '-я очередь',
                 CASE WHEN p % 3 = 2 THEN 'Москва' ELSE 'Санкт-Петербург' END, 1, ${nowTs}::timestamptz - interval '60 days'
            FROM generate_series(0, ${projects - 1}::int) p`;
        await tx`INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors, updated_at)
          SELECT pg_temp.target_uid('building:' || b),
                 CASE WHEN (b / ${TARGET_LAYOUT.buildingsPerProject}::int) % 3 = 2 THEN ${tenantB}::uuid ELSE ${tenantA}::uuid END,
                 pg_temp.target_uid('project:' || (b / ${TARGET_LAYOUT.buildingsPerProject}::int)),
                 'Корпус ' || (b % ${TARGET_LAYOUT.buildingsPerProject}::int + 1), ${TARGET_LAYOUT.sections}::int, ${TARGET_LAYOUT.floors}::int,
                 ${nowTs}::timestamptz - interval '60 days'
            FROM generate_series(0, ${buildings - 1}::int) b`;
      });

      // every cell of every building; one in `stride` cells (spread over all buildings) carries a booking
      await step('cells', () => tx`CREATE TEMP TABLE t_obj ON COMMIT DROP AS
        SELECT i, b, pg_temp.target_uid('object:' || i) AS id,
               pg_temp.target_uid('building:' || b) AS building_id,
               pg_temp.target_uid('project:' || (b / ${TARGET_LAYOUT.buildingsPerProject}::int)) AS project_id,
               CASE WHEN (b / ${TARGET_LAYOUT.buildingsPerProject}::int) % 3 = 2 THEN ${tenantB}::uuid ELSE ${tenantA}::uuid END AS tenant_id,
               section, floor, pos,
               section::text || lpad(floor::text, 2, '0') || lpad(pos::text, 2, '0') AS number,
               CASE pos WHEN 1 THEN 0 WHEN 2 THEN 1 WHEN 3 THEN 2 ELSE 2 + h % 3 END AS rooms,
               h,
               CASE WHEN i % ${stride}::int = ${Math.floor(stride / 2)}::int AND i / ${stride}::int < ${totalBookings}::int THEN i / ${stride}::int END AS j
          FROM (SELECT i, i / ${CELLS}::int AS b,
                       (i % ${CELLS}::int) / ${TARGET_LAYOUT.floors * TARGET_LAYOUT.perFloor}::int + 1 AS section,
                       (i % ${TARGET_LAYOUT.floors * TARGET_LAYOUT.perFloor}::int) / ${TARGET_LAYOUT.perFloor}::int + 1 AS floor,
                       i % ${TARGET_LAYOUT.perFloor}::int + 1 AS pos,
                       abs(hashtext('cell:' || i)) AS h
                  FROM generate_series(0, ${objects - 1}::int) i) c`);

      // the bookings: the first activeBookings active (2/5 Reserved, 1/5 AwaitingPayment, 2/5 Booked), the rest ended
      await step('bookings plan', () => tx`CREATE TEMP TABLE t_bk ON COMMIT DROP AS
        SELECT j, pg_temp.target_uid('booking:' || j) AS id, pg_temp.target_uid('deal:' || j) AS deal_id, o.id AS object_id,
               o.tenant_id, CASE WHEN o.tenant_id = ${tenantA}::uuid THEN 'A' ELSE 'B' END AS tkey, k.status,
               CASE WHEN k.status IN ('Reserved', 'AwaitingPayment') OR (k.status = 'Booked' AND j % 2 = 1) THEN 'paid' ELSE 'free' END AS program,
               t.reserve_expires_at, t.booked_at, t.booking_expires_at, t.closed_at
          FROM t_obj o
          CROSS JOIN LATERAL (SELECT CASE
               WHEN o.j < ${opts.activeBookings}::int THEN (ARRAY['Reserved', 'Reserved', 'AwaitingPayment', 'Booked', 'Booked'])[1 + o.j % 5]
               ELSE (ARRAY['Completed', 'ReserveExpired', 'BookingExpired', 'Cancelled'])[1 + (o.j - ${opts.activeBookings}::int) % 4] END AS status) k
          CROSS JOIN LATERAL (SELECT
               CASE k.status
                 WHEN 'Booked' THEN ${nowTs}::timestamptz - interval '1 hour' - (o.j % 2000) * interval '1 minute'
                 WHEN 'Completed' THEN ${nowTs}::timestamptz - interval '10 days'
                 WHEN 'ReserveExpired' THEN ${nowTs}::timestamptz - interval '3 days' - (o.j % 1000) * interval '1 minute'
                 WHEN 'BookingExpired' THEN ${nowTs}::timestamptz - interval '6 days'
                 WHEN 'Cancelled' THEN ${nowTs}::timestamptz - interval '2 days'
                 ELSE ${nowTs}::timestamptz + interval '2 hours' + (o.j % 1200) * interval '1 minute' END AS reserve_expires_at,
               CASE k.status
                 WHEN 'Booked' THEN ${nowTs}::timestamptz - interval '1 hour' - (o.j % 2000) * interval '1 minute'
                 WHEN 'Completed' THEN ${nowTs}::timestamptz - interval '10 days'
                 WHEN 'BookingExpired' THEN ${nowTs}::timestamptz - interval '6 days' END AS booked_at,
               CASE k.status
                 WHEN 'Booked' THEN ${nowTs}::timestamptz + interval '3 hours' + (o.j % 2600) * interval '1 minute'
                 WHEN 'Completed' THEN ${nowTs}::timestamptz - interval '8 days'
                 WHEN 'BookingExpired' THEN ${nowTs}::timestamptz - interval '4 days' END AS booking_expires_at,
               CASE k.status
                 WHEN 'Completed' THEN ${nowTs}::timestamptz - interval '9 days'
                 WHEN 'ReserveExpired' THEN ${nowTs}::timestamptz - interval '3 days' - (o.j % 1000) * interval '1 minute' + interval '30 seconds'
                 WHEN 'BookingExpired' THEN ${nowTs}::timestamptz - interval '4 days' + interval '30 seconds'
                 WHEN 'Cancelled' THEN ${nowTs}::timestamptz - interval '2 days' - interval '30 minutes' END AS closed_at) t
         WHERE o.j IS NOT NULL`);
      await tx`ALTER TABLE t_bk ADD COLUMN created_at timestamptz, ADD COLUMN updated_at timestamptz, ADD COLUMN payment_status text, ADD COLUMN version int`;
      await tx`UPDATE t_bk SET
          created_at = CASE WHEN status IN ('Reserved', 'AwaitingPayment') THEN reserve_expires_at - interval '24 hours'
                            WHEN program = 'paid' THEN reserve_expires_at - interval '24 hours' ELSE reserve_expires_at - interval '60 minutes' END,
          payment_status = CASE WHEN program = 'free' THEN 'NotRequired' WHEN status = 'Reserved' THEN 'Pending'
                                WHEN status = 'AwaitingPayment' THEN (ARRAY['ContractUploaded', 'ReceiptUploaded'])[1 + j % 2] ELSE 'Paid' END,
          version = CASE status WHEN 'Reserved' THEN 1 WHEN 'AwaitingPayment' THEN CASE WHEN j % 2 = 1 THEN 3 ELSE 2 END
                                WHEN 'Booked' THEN CASE WHEN program = 'paid' THEN 4 ELSE 2 END
                                WHEN 'Completed' THEN 3 WHEN 'BookingExpired' THEN 3 ELSE 2 END`;
      await tx`UPDATE t_bk SET updated_at = coalesce(closed_at, booked_at, CASE WHEN status = 'AwaitingPayment' THEN created_at + interval '30 minutes' ELSE created_at END)`;
      await tx`CREATE INDEX ON t_bk (object_id)`;
      await tx`ANALYZE t_bk`;

      await step(`${objects} property objects`, () => tx`INSERT INTO chessboard.property_objects
          (id, tenant_id, project_id, building_id, section, floor, number, rooms, area, price, status, reserved_until, booked_until,
           hold_deal_id, hold_booking_id, sold_at, status_source, status_changed_at, updated_at, version)
        SELECT o.id, o.tenant_id, o.project_id, o.building_id, o.section, o.floor, o.number, o.rooms, s.area,
               round(s.area * CASE WHEN o.tenant_id = ${tenantB}::uuid THEN 310000 ELSE 210000 END * (1 + o.floor * 0.006) * (0.95 + (o.h % 100) / 1000.0) / 10000) * 10000,
               s.status,
               CASE WHEN s.status = 'Reserved' THEN bk.reserve_expires_at END,
               CASE WHEN s.status = 'Booked' THEN bk.booking_expires_at END,
               CASE WHEN s.status IN ('Reserved', 'Booked') THEN bk.deal_id END,
               CASE WHEN s.status IN ('Reserved', 'Booked') THEN bk.id END,
               CASE WHEN s.status = 'Sold' THEN coalesce(bk.closed_at, ${nowTs}::timestamptz - (1 + o.h % 300) * interval '1 day') END,
               CASE WHEN bk.id IS NULL THEN 'Import' ELSE 'Crm' END,
               coalesce(bk.updated_at, ${nowTs}::timestamptz - interval '40 days'),
               coalesce(bk.updated_at, ${nowTs}::timestamptz - interval '40 days'),
               CASE WHEN bk.id IS NULL THEN 1 WHEN bk.status IN ('Reserved', 'AwaitingPayment', 'Booked') THEN 2 ELSE 3 END
          FROM t_obj o
          LEFT JOIN t_bk bk ON bk.j = o.j
          CROSS JOIN LATERAL (SELECT
               CASE WHEN o.rooms = 0 THEN 22 + (o.h % 80) / 10.0 ELSE 30 + o.rooms * 17 + (o.h % 120) / 10.0 END AS area,
               CASE WHEN bk.status IN ('Reserved', 'AwaitingPayment') THEN 'Reserved'
                    WHEN bk.status = 'Booked' THEN 'Booked'
                    WHEN bk.status = 'Completed' THEN 'Sold'
                    WHEN bk.id IS NOT NULL THEN 'Free'
                    WHEN (o.h / 7) % 100 < 12 THEN 'Sold' WHEN (o.h / 7) % 100 < 14 THEN 'Hidden' ELSE 'Free' END AS status) s`);

      await step(`${totalBookings} deals and bookings, timeline`, async () => {
        await tx`INSERT INTO crm.deals (id, tenant_id, title, agent_id, status, version, created_at, updated_at)
          SELECT deal_id, tenant_id, 'Сделка №' || (100000 + j),
                 CASE WHEN tkey = 'A' THEN ${agentA}::uuid ELSE ${agentB}::uuid END,
                 CASE WHEN status IN ('Reserved', 'AwaitingPayment', 'Booked') THEN 'Booking' WHEN status = 'Completed' THEN 'Sale' ELSE 'Application' END,
                 1, created_at - interval '2 days', updated_at
            FROM t_bk`;
        await tx`INSERT INTO crm.bookings (id, tenant_id, deal_id, property_object_id, program_id, status, reserve_expires_at, booking_expires_at,
              booked_at, payment_status, contract_document, receipt_document, created_by, closed_reason, closed_at, version, created_at, updated_at)
          SELECT id, tenant_id, deal_id, object_id,
                 CASE tkey || program WHEN 'Afree' THEN ${idFor('program:A:free')}::uuid WHEN 'Apaid' THEN ${idFor('program:A:paid')}::uuid
                                      WHEN 'Bfree' THEN ${idFor('program:B:free')}::uuid ELSE ${idFor('program:B:paid')}::uuid END,
                 status, reserve_expires_at, booking_expires_at, booked_at, payment_status,
                 CASE WHEN payment_status IN ('ContractUploaded', 'ReceiptUploaded', 'Paid') THEN 'contract-' || j || '.pdf' END,
                 CASE WHEN payment_status IN ('ReceiptUploaded', 'Paid') THEN 'receipt-' || j || '.pdf' END,
                 CASE WHEN tkey = 'A' THEN ${agentA}::uuid ELSE ${agentB}::uuid END,
                 CASE WHEN status = 'Cancelled' THEN 'Клиент передумал' END, closed_at, version, created_at, updated_at
            FROM t_bk`;
        await tx`INSERT INTO crm.booking_timeline (booking_id, tenant_id, at, actor_type, actor_id, action, from_status, to_status, reason, booking_version)
          SELECT id, tenant_id, created_at, 'user', CASE WHEN tkey = 'A' THEN ${agentA} ELSE ${agentB} END, 'create', NULL, 'Reserved', NULL, 1
            FROM t_bk
          UNION ALL
          SELECT id, tenant_id, updated_at,
                 CASE WHEN status LIKE '%Expired' THEN 'system' ELSE 'user' END,
                 CASE WHEN status LIKE '%Expired' THEN 'booking-expiration' WHEN tkey = 'A' THEN ${agentA} ELSE ${agentB} END,
                 'seed:' || status, 'Reserved', status, NULL, version
            FROM t_bk WHERE status <> 'Reserved'`;
      });

      await step('status history of the booked objects', () => tx`INSERT INTO chessboard.property_object_status_history
          (property_object_id, tenant_id, from_status, to_status, status_source, at, booking_id, deal_id, reason, version)
        SELECT po.id, po.tenant_id, 'Free', CASE WHEN bk.status IN ('Reserved', 'AwaitingPayment') THEN 'Reserved' ELSE 'Booked' END, 'Crm', bk.created_at, bk.id, bk.deal_id, 'seed', 2
          FROM t_bk bk JOIN chessboard.property_objects po ON po.id = bk.object_id
        UNION ALL
        SELECT po.id, po.tenant_id, CASE WHEN bk.status = 'ReserveExpired' OR bk.status = 'Cancelled' THEN 'Reserved' ELSE 'Booked' END, po.status, 'Crm', bk.updated_at, bk.id, bk.deal_id, 'seed', 3
          FROM t_bk bk JOIN chessboard.property_objects po ON po.id = bk.object_id
         WHERE bk.status NOT IN ('Reserved', 'AwaitingPayment', 'Booked')`);

      await step('crm projection of the objects', () => tx`INSERT INTO crm.property_objects (id, tenant_id, project_id, status, deleted, source_version, source_changed_at, deleted_at, updated_at, floor, rooms)
        SELECT po.id, po.tenant_id, po.project_id, po.status, false, po.version, po.updated_at, NULL, po.updated_at, po.floor, po.rooms
          FROM chessboard.property_objects po JOIN t_obj o ON o.id = po.id`);

      await step('project aggregates', () => tx`UPDATE chessboard.projects p SET
          property_objects_free_count = a.free, property_objects_total_count = a.total,
          property_objects_held_count = a.held, property_objects_sold_count = a.sold, aggregates_recalculated_at = ${nowTs}::timestamptz
        FROM (SELECT po.project_id, count(*)::int AS total, count(*) FILTER (WHERE po.status = 'Free')::int AS free,
                     count(*) FILTER (WHERE po.status IN ('Reserved', 'Booked'))::int AS held, count(*) FILTER (WHERE po.status = 'Sold')::int AS sold
                FROM chessboard.property_objects po JOIN t_obj o ON o.id = po.id GROUP BY po.project_id) a
       WHERE p.id = a.project_id`);

      await step('catalog cards', async () => {
        await tx`INSERT INTO catalog.project_cards (id, developer_id, name, city, status, free_count, source_version, source_updated_at, created_at, updated_at)
          SELECT p.id, p.tenant_id, p.name, p.city, 'Published', p.property_objects_free_count, p.version, p.updated_at, ${nowTs}::timestamptz - interval '60 days', p.updated_at
            FROM chessboard.projects p WHERE p.id IN (SELECT DISTINCT project_id FROM t_obj)`;
        await tx`INSERT INTO catalog.property_object_cards (id, project_id, building_id, developer_id, number, floor, rooms, area, price, sale_status, status,
              source_version, source_updated_at, created_at, updated_at)
          SELECT po.id, po.project_id, po.building_id, po.tenant_id, po.number, po.floor, po.rooms, po.area, po.price, po.status,
                 CASE WHEN po.status = 'Hidden' THEN 'Hidden' ELSE 'Published' END, po.version, po.updated_at, ${nowTs}::timestamptz - interval '60 days', po.updated_at
            FROM chessboard.property_objects po JOIN t_obj o ON o.id = po.id`;
      });

      // the Delisted backlog: ten projects deleted in chessboard 31–90 days ago, their cards past the
      // 30-day retention (the delisted-retention job's work), crm's tombstones of their objects, overrides
      await step(`Delisted backlog of ${delistedCards} cards`, async () => {
        await tx`INSERT INTO catalog.project_cards (id, developer_id, name, city, status, free_count, source_version, source_updated_at, created_at, updated_at)
          SELECT pg_temp.target_uid('delisted-project:' || k), ${tenantA}::uuid, 'ЖК «Снесённый квартал» ' || (k + 1), 'Санкт-Петербург', 'Delisted', 0, 3,
                 ${nowTs}::timestamptz - (31 + k * 6) * interval '1 day', ${nowTs}::timestamptz - interval '400 days', ${nowTs}::timestamptz - (31 + k * 6) * interval '1 day'
            FROM generate_series(0, 9) k`;
        await tx`INSERT INTO catalog.property_object_cards (id, project_id, building_id, developer_id, number, floor, rooms, area, price, sale_status, status,
              source_version, source_updated_at, created_at, updated_at)
          SELECT pg_temp.target_uid('delisted-object:' || d), pg_temp.target_uid('delisted-project:' || (d % 10)), pg_temp.target_uid('delisted-building:' || (d % 10)),
                 ${tenantA}::uuid, (1 + d / 10 % 4)::text || lpad((1 + d / 40 % 25)::text, 2, '0') || lpad((1 + d / 1000)::text, 3, '0'),
                 1 + d / 40 % 25, 1 + d % 3, 40 + d % 50, 8000000 + (d % 50) * 100000, 'Free', 'Delisted', 2,
                 ${nowTs}::timestamptz - (31 + (d % 10) * 6) * interval '1 day', ${nowTs}::timestamptz - interval '400 days', ${nowTs}::timestamptz - (31 + (d % 10) * 6) * interval '1 day'
            FROM generate_series(0, ${delistedCards - 1}::int) d`;
        await tx`INSERT INTO crm.property_objects (id, tenant_id, project_id, status, deleted, source_version, source_changed_at, deleted_at, updated_at, floor, rooms)
          SELECT c.id, c.developer_id, c.project_id, c.sale_status, true, c.source_version, c.updated_at, c.updated_at, c.updated_at, c.floor, c.rooms
            FROM catalog.property_object_cards c WHERE c.project_id IN (SELECT pg_temp.target_uid('delisted-project:' || k) FROM generate_series(0, 9) k)`;
        await tx`INSERT INTO catalog.property_object_display_overrides (id, property_object_id, title, badge, deleted_at, created_at, updated_at)
          SELECT pg_temp.target_uid('delisted-override:' || d), pg_temp.target_uid('delisted-object:' || d), NULL, 'Скидка',
                 CASE WHEN d % 20 = 10 THEN ${nowTs}::timestamptz - interval '50 days' END, ${nowTs}::timestamptz - interval '100 days', ${nowTs}::timestamptz - interval '50 days'
            FROM generate_series(0, ${delistedCards - 1}::int, 10) d`;
      });

      // a week of job history: the minute jobs every minute, the reconciliation every 5 minutes, the
      // retention daily; a few failures and skips among them, as a real week has
      // a year of past bookings: days the reports' rollup may already hold would miss them (the job rolls up again)
      await step('reports rollup cleared', () => tx`DELETE FROM crm.booking_daily_rollup`.then(() => tx`DELETE FROM crm.booking_rollup_days`));

      const jobRuns = await step('job history', async () => {
        const [{ n }] = await tx`WITH runs AS (
            SELECT job, every, g FROM (VALUES ('booking-expiration', 1), ('property-object-hold-expiration', 1), ('project-aggregates-recalc', 1),
                                              ('reconciliation', 5), ('delisted-retention', 1440)) AS j(job, every)
            CROSS JOIN LATERAL generate_series(1, 7 * 1440 / every) g
          ), ins AS (
            INSERT INTO ops.job_runs (job, run_id, trigger, instance, started_at, finished_at, status, summary, error)
            SELECT job, pg_temp.target_uid('run:' || job || ':' || g), 'schedule', 'worker-' || (1 + g % 2),
                   ${nowTs}::timestamptz - g * every * interval '1 minute',
                   ${nowTs}::timestamptz - g * every * interval '1 minute' + (20 + abs(hashtext(job || g)) % 400) * interval '1 millisecond',
                   CASE WHEN g % 997 = 0 THEN 'failed' WHEN g % 499 = 0 THEN 'skipped' ELSE 'succeeded' END,
                   CASE WHEN g % 997 = 0 OR g % 499 = 0 THEN NULL
                        WHEN job = 'booking-expiration' THEN jsonb_build_object('ReservedExpiredCount', g % 3, 'BookedExpiredCount', g % 2, 'SkippedLockedCount', 0, 'DurationMs', 20 + g % 90)
                        WHEN job = 'property-object-hold-expiration' THEN jsonb_build_object('ReservedReleasedCount', g % 5 / 4, 'BookedReleasedCount', 0, 'SkippedLockedCount', 0, 'DurationMs', 15 + g % 60)
                        WHEN job = 'project-aggregates-recalc' THEN jsonb_build_object('ProjectsRecalculated', g % 4, 'DurationMs', 10 + g % 40)
                        WHEN job = 'reconciliation' THEN jsonb_build_object('BookingNotHeld', 0, 'HoldWithoutBooking', 0, 'TimerMismatch', 0, 'Total', 0, 'DurationMs', 300 + g % 400)
                        ELSE jsonb_build_object('DeletedPropertyObjectCards', 0, 'DeletedProjectCards', 0, 'DeletedOverrides', 0, 'BatchesProcessed', 1, 'HasMore', false, 'DurationMs', 40) END,
                   CASE WHEN g % 997 = 0 THEN 'canceling statement due to statement timeout' END
              FROM runs
            RETURNING 1)
          SELECT count(*)::int AS n FROM ins`;
        return n as number;
      });

      return { jobRuns };
    });
    if (result !== null) {
      // outside the transaction (VACUUM cannot run in one): statistics for the planner, and the visibility
      // map, without which no read of these tables is an Index Only Scan until autovacuum comes by
      await step('vacuum (analyze)', () => sql.unsafe(`VACUUM (ANALYZE) ${TARGET_TABLES.join(', ')}`));
    }
    const durationMs = Math.round(performance.now() - started);
    if (result === null) {
      log('[seed:target] target-load data already present; nothing to do');
      return { inserted: false, objects, buildings, projects, activeBookings: opts.activeBookings, endedBookings: opts.endedBookings, delistedCards, jobRuns: 0, durationMs };
    }
    log(`[seed:target] ${objects} property objects in ${buildings} buildings of ${projects} projects, ${opts.activeBookings} active and ${opts.endedBookings} ended bookings, ${delistedCards} Delisted cards, ${result.jobRuns} job runs in ${(durationMs / 1000).toFixed(1)} s`);
    return { inserted: true, objects, buildings, projects, activeBookings: opts.activeBookings, endedBookings: opts.endedBookings, delistedCards, jobRuns: result.jobRuns, durationMs };
  } finally {
    await sql.end({ timeout: 2 });
  }
}
