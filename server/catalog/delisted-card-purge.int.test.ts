import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '../platform/errors';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import type * as Card from './card';
import { purgeRemovableBatch } from './delisted-card-purge';
import { createDelistedRetentionJob, DelistedRetentionRunFailed } from './delisted-retention.job';
import { countRows, DAY_MS, insertObjectCard, insertProjectCard, jobContext, TENANT } from '../../test/fixtures/catalog.fixtures';

/**
 * The live-card guard of the batch statement (purgeRemovableBatch): the domain rule `isRemovable` is
 * asked about what the DELETE removed, and a refusal rolls the batch back. The SQL predicate and the
 * rule agree, so to see the guard act the rule is wrapped in a spy that a test can make refuse — what a
 * predicate bug (or a rule that changed without its SQL) would look like.
 */
const rule = vi.hoisted(() => ({ refuse: false, calls: [] as { status: string; updatedAt: Date }[] }));
vi.mock('./card', async (importOriginal) => {
  const actual = await importOriginal<typeof Card>();
  return {
    ...actual,
    isRemovable: (card: { status: Card.CardStatus; updatedAt: Date }, cutoff: Date) => {
      rule.calls.push(card);
      return rule.refuse ? false : actual.isRemovable(card, cutoff);
    },
  };
});

let t: TestContext;
beforeAll(async () => { t = await createTestContext(); });
afterAll(async () => { await t?.close(); });
beforeEach(async () => {
  rule.refuse = false;
  rule.calls = [];
  await t.database.sql`TRUNCATE catalog.property_object_cards, catalog.project_cards, catalog.property_object_display_overrides,
    catalog.building_display_overrides`;
});

const NOW = new Date('2025-06-01T00:30:00.000Z');
const CUTOFF = new Date(NOW.getTime() - 30 * DAY_MS);
const before = (ms: number) => new Date(CUTOFF.getTime() - ms);

describe('purgeRemovableBatch: the domain rule guards what the batch statement deleted', () => {
  it('asks the rule about the newest deleted card of each status and returns every deleted id', async () => {
    const cards = [
      await insertObjectCard(t.database, { status: 'Delisted', updatedAt: before(3 * DAY_MS) }),
      await insertObjectCard(t.database, { status: 'Delisted', updatedAt: before(1000) }), // the newest
      await insertObjectCard(t.database, { status: 'Delisted', updatedAt: before(2 * DAY_MS) }),
    ];
    const batch = await t.database.db.transaction((tx) => purgeRemovableBatch(tx, { phase: 'property_object', cutoff: CUTOFF, limit: 10 }));
    expect([...batch.ids].sort()).toEqual([...cards].sort());
    expect(rule.calls).toEqual([{ status: 'Delisted', updatedAt: before(1000) }]);
    expect(await countRows(t.database, 'catalog.property_object_cards')).toBe(0);
  });

  it('a card the rule refuses fails the batch (CATALOG_RETENTION_LIVE_CARD_IN_BATCH) and its transaction removes nothing', async () => {
    const card = await insertObjectCard(t.database, { status: 'Delisted', updatedAt: before(DAY_MS) });
    await t.database.sql`INSERT INTO catalog.property_object_display_overrides (id, property_object_id, title, deleted_at)
      VALUES (${randomUUID()}, ${card}, 'kept', NULL)`;
    rule.refuse = true;
    const err = await t.database.db.transaction((tx) => purgeRemovableBatch(tx, { phase: 'property_object', cutoff: CUTOFF, limit: 10 }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'CATALOG_RETENTION_LIVE_CARD_IN_BATCH', details: { ids: [card], statuses: ['Delisted'] } });
    expect(await countRows(t.database, 'catalog.property_object_cards', `id = '${card}'`)).toBe(1);
    expect(await countRows(t.database, 'catalog.property_object_display_overrides', `property_object_id = '${card}'`)).toBe(1);
  });

  it('through the job: the refused batch rolls back, the run fails and logs the batch; the cards of both phases stay', async () => {
    const projectId = await insertProjectCard(t.database, { status: 'Delisted', updatedAt: before(DAY_MS) });
    const card = await insertObjectCard(t.database, { projectId, status: 'Delisted', updatedAt: before(DAY_MS) });
    rule.refuse = true;
    const runId = randomUUID();
    const err = await createDelistedRetentionJob({ clock: () => NOW }).run(jobContext(t, { runId })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DelistedRetentionRunFailed);
    expect((err as DelistedRetentionRunFailed).summary).toMatchObject({ DeletedPropertyObjectCards: 0, BatchesProcessed: 0, HasMore: true, StoppedBy: 'Failed' });
    // the spec's "systematically undeletable batch" is named: its ids were selected before the guard refused it
    expect(t.logLines().find((l) => l.event === 'catalog.delisted_retention.batch_failed' && l.RunId === runId))
      .toMatchObject({ level: 'error', phase: 'property_object', batchIndex: 1, batchIds: [card] });
    expect(await countRows(t.database, 'catalog.property_object_cards', `id = '${card}'`)).toBe(1);
    expect(await countRows(t.database, 'catalog.project_cards', `id = '${projectId}'`)).toBe(1);
  });
});

describe('the delisted-retention job names the ids of a batch whose DELETE statement fails', () => {
  it('a failing DELETE rolls the batch back and the batch_failed log carries the ids selected for it', async () => {
    const cards = [
      await insertObjectCard(t.database, { status: 'Delisted', updatedAt: before(2 * DAY_MS) }),
      await insertObjectCard(t.database, { status: 'Delisted', updatedAt: before(DAY_MS) }),
    ];
    // the statement itself fails (as a lock timeout or a constraint would), not the domain guard
    await t.database.sql.unsafe(`CREATE FUNCTION catalog.test_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'simulated statement failure'; END $$`);
    await t.database.sql.unsafe(`CREATE TRIGGER test_refuse_delete BEFORE DELETE ON catalog.property_object_cards FOR EACH ROW EXECUTE FUNCTION catalog.test_refuse_delete()`);
    try {
      const runId = randomUUID();
      const err = await createDelistedRetentionJob({ clock: () => NOW }).run(jobContext(t, { runId })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DelistedRetentionRunFailed);
      const failed = t.logLines().find((l) => l.event === 'catalog.delisted_retention.batch_failed' && l.RunId === runId);
      expect(failed).toMatchObject({ level: 'error', phase: 'property_object', batchIndex: 1 });
      expect([...(failed!.batchIds as string[])].sort()).toEqual([...cards].sort());
      for (const card of cards) expect(await countRows(t.database, 'catalog.property_object_cards', `id = '${card}'`)).toBe(1);
    } finally {
      await t.database.sql.unsafe('DROP TRIGGER test_refuse_delete ON catalog.property_object_cards; DROP FUNCTION catalog.test_refuse_delete()');
    }
  });
});

describe('purgeRemovableBatch: the overrides of a batch are found through their index', () => {
  it('a full batch of 2,000 cards among 22,000 overrides: no scan of the whole overrides table, and exactly the batch\'s overrides go', async () => {
    // 2,000 Delisted and 20,000 Published cards, one override each; with a full batch the planner used
    // to hash the batch's 2,000 ids against a scan of every override (issue #17)
    await t.database.sql.unsafe(`
      INSERT INTO catalog.property_object_cards (id, project_id, building_id, developer_id, number, floor, rooms, area, price, sale_status,
        status, source_version, created_at, updated_at)
      SELECT gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), '${TENANT}', i::text, 1, 1, 40, 5000000, 'Free',
             CASE WHEN i <= 2000 THEN 'Delisted' ELSE 'Published' END, 1, $1::timestamptz, $1::timestamptz
      FROM generate_series(1, 22000) i`, [before(DAY_MS).toISOString()]);
    await t.database.sql`INSERT INTO catalog.property_object_display_overrides (id, property_object_id, title)
      SELECT gen_random_uuid(), id, 'Title' FROM catalog.property_object_cards`;
    await t.database.sql`ANALYZE catalog.property_object_cards, catalog.property_object_display_overrides`;

    const { batch, scans } = await t.database.db.transaction(async (tx) => {
      const purged = await purgeRemovableBatch(tx, { phase: 'property_object', cutoff: CUTOFF, limit: 2000 });
      // this transaction's own counts for the overrides table: rows read by sequential scans
      const [row] = await tx.execute<{ seq_tup_read: string; idx_scan: string }>(sql`SELECT seq_tup_read, idx_scan FROM pg_stat_xact_user_tables
        WHERE relid = 'catalog.property_object_display_overrides'::regclass`);
      return { batch: purged, scans: { seqRowsRead: Number(row.seq_tup_read), idx: Number(row.idx_scan) } };
    });
    expect(batch.ids).toHaveLength(2000);
    expect(batch.deletedOverrides).toBe(2000);
    expect(scans.seqRowsRead).toBe(0); // was 22,000: every override, in every batch
    expect(scans.idx).toBeGreaterThan(0);
    expect(await countRows(t.database, 'catalog.property_object_display_overrides')).toBe(20000);
    expect(await countRows(t.database, 'catalog.property_object_cards', `status = 'Delisted'`)).toBe(0);
  });
});
