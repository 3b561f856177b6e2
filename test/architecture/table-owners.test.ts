import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { contextOf, sourceFiles, TableWriteScanner, type TableRead, type TableWrite } from './table-writes';

/**
 * Every table has one owner — the context folder whose schema declares it — and only that context
 * writes it; other contexts read it through the owner's published views (`<schema>.v_*`) or functions. Other contexts act through the owner's exported commands (ops → chessboard's
 * resolveHoldMismatch, each context's inbox replay, crm's republish; every context → platform's recordAudit).
 * This test lists each table's writers from the code (table-writes.ts) and fails naming file → table
 * for every write from another folder.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Test support is not production code: fixtures and fault scenarios build worlds straight in the tables
 * (the seed script lives outside server/ and is not scanned at all).
 */
const TEST_SUPPORT = [
  /^test\//, // the test kit: harness, fixtures, fault scenarios
  /(^|\/)[\w-]*test-fixtures\.ts$/,
  /\.fixtures\.ts$/,
];

/**
 * The true exceptions: the platform's outbox/inbox mechanisms write the table their caller names, and the
 * callers are checked as the writers (`writeOutbox(tx, 'crm', …)`, a consumer's `inbox: 'crm'`).
 * `tables: 'any'` = whatever the file writes. An entry that matches nothing fails the test.
 */
const ALLOWED: { file: string; tables: 'any' | string[]; why: string }[] = [
  { file: 'server/platform/outbox/write.ts', tables: 'any', why: 'writeOutbox inserts into the outbox its caller names; the call sites count as the writes' },
  { file: 'server/platform/outbox/relay.ts', tables: 'any', why: 'the relay marks rows published and prunes them in every outbox (DESIGN: the outbox pattern)' },
  { file: 'server/platform/kafka/consumer-runner.ts', tables: 'any', why: "the runner records each message in the consumer's own inbox; the definitions' `inbox:` count as the writes" },
  // the scan does not resolve a generic parameter: writeUpsertedCard writes the CardTable its caller passes —
  // catalog.property_object_cards or catalog.project_cards, both catalog's own
  { file: 'server/catalog/card-projection.ts', tables: ['dynamic'], why: 'one write for an upserted object or project card (CardTable)' },
];

const isTestSupport = (file: string) => TEST_SUPPORT.some((re) => re.test(file));

function scan() {
  const files = [...sourceFiles(ROOT), ...sourceFiles(ROOT, 'test')];
  const scanner = new TableWriteScanner(ROOT, files);
  const owners = new Map(scanner.declarations.map((d) => [d.table, d.owner]));
  const writes = scanner.allWrites();
  const reads = scanner.allReads();
  return { scanner, owners, writes, reads, files };
}

const allowedFor = (w: TableWrite) => ALLOWED.find((a) => a.file === w.file && (a.tables === 'any' || a.tables.includes(w.table)));
const show = (w: TableWrite) => `${w.file}:${w.line} → ${w.table} (${w.how})`;

/**
 * What a context may read besides its own tables: another context's published reads — the views it
 * declares as `<schema>.v_*` — platform's tables (the job runs, the audit trail), and the outboxes and
 * inboxes, which have the platform's shape (server/platform/outbox/table.ts) and which ops reads as the
 * saga's message log (saga timeline, reconciliation, DLQ). Platform's mechanisms read whatever outbox or
 * inbox their caller names.
 */
function readAllowed(r: TableRead, owner: string | undefined, kind: 'table' | 'view' | undefined): boolean {
  if (owner === r.context || owner === 'platform' || r.context === 'platform') return true;
  if (kind === 'view' && /\.v_\w+$/.test(r.table)) return true;
  return /\.(inbox|outbox)$/.test(r.table);
}

describe('table owners', () => {
  const { scanner, owners, writes, reads, files } = scan();
  const kinds = new Map(scanner.declarations.map((d) => [d.table, d.kind]));

  it('every table is declared once, by one context', () => {
    const tables = scanner.declarations.map((d) => d.table);
    expect(tables.filter((t, i) => tables.indexOf(t) !== i)).toEqual([]);
    // the schemas DESIGN.md names, each owned by the folder of the same name
    for (const t of ['crm.bookings', 'crm.outbox', 'chessboard.property_objects', 'chessboard.hold_mismatches', 'catalog.inbox', 'auth.users', 'profile.requisite_sets', 'messenger.inbox', 'notifications.inbox']) {
      expect(owners.get(t), t).toBe(t.split('.')[0]);
    }
    // the ops-schema tables every context writes through platform (the job runner's record, the audit trail)
    for (const t of ['ops.job_runs', 'ops.audit_log']) expect(owners.get(t), t).toBe('platform');
  });

  it('no context writes a table it does not own', () => {
    const foreign = writes.filter((w) => !isTestSupport(w.file) && owners.get(w.table) !== w.context && !allowedFor(w));
    expect(foreign.map(show)).toEqual([]);
  });

  it("no context reads another context's table: it reads the owner's published views (v_*) or calls the owner", () => {
    const foreign = reads.filter((r) => !isTestSupport(r.file) && !readAllowed(r, owners.get(r.table), kinds.get(r.table)));
    expect(foreign.map((r) => `${r.file}:${r.line} → ${r.table} (${r.how})`)).toEqual([]);
  });

  it('every published view is declared by the owner of its schema and read by another context', () => {
    const views = scanner.declarations.filter((d) => d.kind === 'view');
    expect(views.length).toBeGreaterThan(10);
    expect(views.filter((v) => v.table.split('.')[0] !== v.owner || !/\.v_\w+$/.test(v.table)).map((v) => v.table)).toEqual([]);
    const readByOthers = new Set(reads.filter((r) => !isTestSupport(r.file) && owners.get(r.table) !== r.context).map((r) => r.table));
    expect(views.filter((v) => !readByOthers.has(v.table)).map((v) => v.table)).toEqual([]);
  });

  it('the read scan finds the readers (drizzle and raw SQL, views and tables)', () => {
    const has = (table: string, file: string) => reads.some((r) => r.table === table && r.file === file);
    expect(has('crm.v_bookings', 'server/ops/reconciliation.ts')).toBe(true);
    expect(has('crm.v_booking_daily_rollup', 'server/reports/funnel.ts')).toBe(true);
    expect(has('chessboard.v_hold_releases', 'server/ops/saga-timeline.ts')).toBe(true);
    expect(has('chessboard.v_property_objects', 'server/ops/crm-projection-rebuild.ts')).toBe(true);
    expect(has('crm.bookings', 'server/crm/queries.ts')).toBe(true);
  });

  it('every allow-list entry is still needed', () => {
    const used = ALLOWED.filter((a) => writes.some((w) => allowedFor(w) === a && owners.get(w.table) !== w.context));
    expect(ALLOWED.filter((a) => !used.includes(a)).map((a) => a.file)).toEqual([]);
  });

  it('lists each table with its writers (the scan finds every form of write)', () => {
    const writersOf = new Map<string, Set<string>>();
    for (const w of writes.filter((x) => !isTestSupport(x.file))) {
      const s = writersOf.get(w.table) ?? new Set();
      s.add(w.file);
      writersOf.set(w.table, s);
    }
    const has = (table: string, file: string) => writersOf.get(table)?.has(file) ?? false;
    // drizzle insert / update / delete
    expect(has('crm.bookings', 'server/crm/commands/create-booking.ts')).toBe(true);
    expect(has('chessboard.hold_mismatches', 'server/chessboard/crm-property-object-status.consumer.ts')).toBe(true);
    expect(has('ops.metric_samples', 'server/ops/dashboard/metric-samples.ts')).toBe(true);
    // raw SQL: a literal schema.table, a ${table} placeholder, a table picked by a conditional
    expect(has('notifications.notifications', 'server/notifications/retention.job.ts')).toBe(true);
    expect(has('chessboard.hold_releases', 'server/chessboard/property-object-hold-expiration.sql.ts')).toBe(true);
    expect(has('catalog.building_display_overrides', 'server/catalog/delisted-card-purge.ts')).toBe(true);
    // the outbox writer's callers and the consumers' inboxes
    expect(writersOf.get('crm.outbox')?.size).toBeGreaterThan(1);
    expect(has('catalog.inbox', 'server/catalog/card-projection.consumer.ts')).toBe(true);
    // test support is scanned too (and set aside by TEST_SUPPORT, not missed)
    expect(writes.some((w) => w.file === 'test/fixtures/ops-dashboard.fixtures.ts' && w.table === 'chessboard.projects')).toBe(true);
    expect(files.length).toBeGreaterThan(100);
  });
});

describe('table-writes scanner', () => {
  const schema = `import { pgSchema } from 'drizzle-orm/pg-core';
    import { inboxTable } from '../../server/platform/outbox/table';
    export const crm = pgSchema('crm');
    export const bookings = crm.table('bookings', {});
    export const crmInbox = inboxTable(crm);`;
  const scannerOf = (code: string) => new TableWriteScanner('/', ['server/crm/schema.ts', 'server/ops/x.ts'],
    (f) => ({ 'server/crm/schema.ts': schema, 'server/ops/x.ts': code })[f]);
  const tablesWritten = (code: string) => scannerOf(code).writesOf('server/ops/x.ts').map((w) => `${w.table}/${w.how}`);

  it('reads the declarations of pgSchema tables and inboxes', () => {
    expect(scannerOf('').declarations.map((d) => `${d.table}:${d.owner}`)).toEqual(['crm.bookings:crm', 'crm.inbox:crm']);
  });

  it('finds drizzle and raw SQL writes, through imports, aliases and local consts', () => {
    expect(tablesWritten(`import { bookings as b } from '../../server/crm/schema';
      await tx.update(b).set({});`)).toEqual(['crm.bookings/drizzle']);
    expect(tablesWritten(`import * as s from '../../server/crm/schema';
      const t = flag ? s.bookings : s.crmInbox; await db.delete(t);`)).toEqual(['crm.bookings/drizzle', 'crm.inbox/drizzle']);
    expect(tablesWritten('await tx.execute(sql`DELETE FROM crm.inbox WHERE x = ${1}`)')).toEqual(['crm.inbox/sql']);
    expect(tablesWritten('await tx.execute(sql`DELETE FROM ${sql.raw(`${group}.inbox`)} WHERE x = 1`)')).toEqual(['dynamic/sql']);
    expect(tablesWritten("await writeOutbox(tx, 'crm', event)")).toEqual(['crm.outbox/outbox-writer']);
    expect(tablesWritten("export const c = { name: 'g', inbox: 'crm', topics: [] }")).toEqual(['crm.inbox/consumer-inbox']);
  });

  it('does not count row locks, upserts or non-database calls', () => {
    expect(tablesWritten(`import { bookings } from '../../server/crm/schema';
      await tx.execute(sql\`SELECT 1 FROM crm.bookings FOR UPDATE\`);
      await tx.execute(sql\`SELECT 1 FROM crm.bookings b FOR NO KEY UPDATE OF b\`);
      await tx.select().from(bookings).for('update');
      seen.delete(key); hash.update(text);
      await tx.insert(bookings).values({}).onConflictDoUpdate({ target: bookings.id, set: {} });`)).toEqual(['crm.bookings/drizzle']);
    expect(tablesWritten('await tx.execute(sql`INSERT INTO crm.bookings (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET id = 2`)')).toEqual(['crm.bookings/sql']);
  });

  it('finds reads: drizzle from / joins, raw SQL names and placeholders, views declared like tables', () => {
    const withView = `${schema}
      export const bookingsView = crm.view('v_bookings').as((qb) => qb.select().from(bookings));`;
    const scanner = new TableWriteScanner('/', ['server/crm/schema.ts', 'server/ops/x.ts'], (f) => ({ 'server/crm/schema.ts': withView, 'server/ops/x.ts': `
      import { bookings, bookingsView } from '../../server/crm/schema';
      await db.select().from(bookingsView).leftJoin(bookings, sql\`true\`);
      const PAIRS = sql\`crm.inbox i JOIN crm.v_bookings b ON b.id = i.id\`;
      await db.execute(sql\`SELECT 1 FROM \${bookings} WHERE x = 'crm.not_a_table' AND t IS DISTINCT FROM 1\`);` })[f]);
    expect(scanner.declarations.map((d) => `${d.table}:${d.kind}`)).toEqual(['crm.bookings:table', 'crm.inbox:table', 'crm.v_bookings:view']);
    expect(scanner.readsOf('server/ops/x.ts').map((r) => `${r.table}/${r.how}`).sort()).toEqual([
      'crm.bookings/drizzle', 'crm.bookings/sql', 'crm.inbox/sql', 'crm.v_bookings/drizzle', 'crm.v_bookings/sql',
    ]);
  });

  it('names the context of a file', () => {
    expect(contextOf('server/ops/dashboard/dlq.ts')).toBe('ops');
    expect(contextOf('server/main/worker.ts')).toBe('(root)');
  });
});
