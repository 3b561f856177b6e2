import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { seed } from '../../../scripts/seed';
import { SYSTEM_ACTOR, type Actor } from '../../../server/auth/actor';
import { upsertBuilding, upsertProject, upsertPropertyObject } from '../../../server/chessboard/commands';
import { consumers } from '../../../server/main/consumers';
import { cancelBookingCommand } from '../../../server/crm/commands/cancel-booking';
import { cancelDealCommand } from '../../../server/crm/commands/cancel-deal';
import { confirmBookingCommand } from '../../../server/crm/commands/confirm-booking';
import { createBookingCommand } from '../../../server/crm/commands/create-booking';
import { extendBookingCommand } from '../../../server/crm/commands/extend-booking';
import { startSaleCommand } from '../../../server/crm/commands/start-sale';
import { withPrefix } from '../../../server/platform/kafka/topics';
import { projectObjects } from '../../harness/crm-projection';
import type { TestContext } from '../../harness/harness';
import { figure, secondsSince } from '../helpers/figures';
import { plainKafka } from '../helpers/kafka-read';
import { sleep, startWorker, type ManagedProcess } from '../helpers/processes';
import { commandContext } from '../../../server/platform/command-context';

/**
 * Replay of every consumed topic from offset 0 against a settled system (the demo seed + a saga run
 * through every kind of booking event, all consumed by a worker). The consumer groups' offsets are
 * reset to the earliest offset and a worker reads everything again:
 *   A. as deployed — the inboxes drop every message as a duplicate;
 *   B. with the inboxes emptied first — the handlers themselves must be idempotent (booking versions,
 *      tombstones, card source versions).
 * Either way: the state of chessboard and catalog unchanged (row by row), and no new outbox row.
 */

const SNAPSHOT_TABLES = [
  'chessboard.property_objects', 'crm.property_objects', 'chessboard.crm_booking_versions', 'chessboard.projects', 'chessboard.property_object_status_history',
  'chessboard.hold_releases', 'chessboard.hold_mismatches', 'catalog.property_object_cards', 'catalog.project_cards',
  'catalog.property_object_display_overrides', 'crm.bookings', 'crm.deals',
];

export async function replayScenario(t: TestContext, opts: { objects: number; label: string; demoSeed?: boolean }): Promise<void> {
  const { sql, db } = t.database;
  const env = {
    DATABASE_URL: t.url, KAFKA_BROKERS: t.env.KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: t.prefix,
    AGGREGATES_RECALC_SCHEDULE: '* * * * * *', AGGREGATES_RECALC_DEBOUNCE_MS: '200',
  };
  if (opts.demoSeed ?? true) await seed(t.url, () => {});

  // ---- a saga over objects that have catalog cards: every kind of booking event
  const tenantId = randomUUID();
  const projectId = randomUUID();
  const buildingId = randomUUID();
  const programId = randomUUID();
  await db.transaction((tx) => upsertProject(tx, { id: projectId, tenantId, name: 'Replay', city: 'Test' }, commandContext(SYSTEM_ACTOR)));
  await db.transaction((tx) => upsertBuilding(tx, { id: buildingId, tenantId, projectId, name: 'B', sections: 4, floors: 20 }, commandContext(SYSTEM_ACTOR)));
  const objectIds: string[] = [];
  for (let i = 0; i < opts.objects; i++) {
    const id = randomUUID();
    objectIds.push(id);
    await db.transaction((tx) => upsertPropertyObject(tx, { id, tenantId, projectId, buildingId, section: 1 + (i % 4), floor: 1 + Math.floor(i / 4), number: String(100 + i), rooms: 2, area: 50, price: 8_000_000 }, commandContext(SYSTEM_ACTOR)));
  }
  // crm's view of them, as its projection consumer will have it once the consumers run below (DESIGN decision 8)
  await projectObjects(t.database, objectIds.map((id) => ({ id, tenantId, projectId })));
  await sql`INSERT INTO crm.booking_programs (id, tenant_id, name, is_paid, reserve_duration_minutes, booking_duration_hours) VALUES (${programId}, ${tenantId}, 'Free', false, 60, 48)`;
  const pin: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };
  const ctx = () => commandContext(pin, randomUUID());
  for (let i = 0; i < opts.objects; i++) {
    const dealId = randomUUID();
    await sql`INSERT INTO crm.deals (id, tenant_id, title, status) VALUES (${dealId}, ${tenantId}, 'Deal', 'Application')`;
    const b = await db.transaction((tx) => createBookingCommand(tx, { dealId, propertyObjectId: objectIds[i]!, programId }, ctx()));
    switch (i % 6) {
      case 1: await db.transaction((tx) => confirmBookingCommand(tx, { bookingId: b.id }, ctx())); break;
      case 2:
        await db.transaction((tx) => confirmBookingCommand(tx, { bookingId: b.id }, ctx()));
        await db.transaction((tx) => extendBookingCommand(tx, { bookingId: b.id, idempotencyKey: randomUUID() }, ctx()));
        break;
      case 3: await db.transaction((tx) => cancelBookingCommand(tx, { bookingId: b.id, reason: 'replay test' }, ctx())); break;
      case 4:
        await db.transaction((tx) => confirmBookingCommand(tx, { bookingId: b.id }, ctx()));
        await db.transaction((tx) => startSaleCommand(tx, { bookingId: b.id }, ctx()));
        break;
      case 5: await db.transaction((tx) => cancelDealCommand(tx, { dealId, reason: 'replay test' }, ctx())); break;
      default: break;
    }
  }

  const groups = consumers.map((c) => ({ groupId: withPrefix(t.prefix, c.name), inbox: c.inbox, topics: c.topics.map((topic) => withPrefix(t.prefix, topic)) }));
  const kafka = plainKafka(t.env.KAFKA_BROKERS);
  const admin = kafka.admin();
  await admin.connect();
  const workers: ManagedProcess[] = [];

  /** every consumer group has committed the end of every partition of its topics */
  const caughtUp = async () => {
    for (const g of groups) {
      const committed = await admin.fetchOffsets({ groupId: g.groupId, topics: g.topics });
      for (const topic of g.topics) {
        const high = await admin.fetchTopicOffsets(topic);
        for (const p of high) {
          const c = committed.find((x) => x.topic === topic)?.partitions.find((x) => x.partition === p.partition);
          const done = Number(c?.offset ?? -1);
          if (Number(p.high) > 0 && done < Number(p.high)) return false;
        }
      }
    }
    return true;
  };
  const settle = async (worker: ManagedProcess, what: string) => {
    const deadline = Date.now() + 180_000;
    let quietSince = 0;
    let lastOutbox = -1;
    for (;;) {
      const [{ unpublished, outbox }] = await sql<{ unpublished: number; outbox: number }[]>`
        SELECT (SELECT count(*)::int FROM crm.outbox WHERE published_at IS NULL) + (SELECT count(*)::int FROM chessboard.outbox WHERE published_at IS NULL) AS unpublished,
               (SELECT count(*)::int FROM crm.outbox) + (SELECT count(*)::int FROM chessboard.outbox) AS outbox`;
      if (unpublished === 0 && outbox === lastOutbox && (await caughtUp())) {
        quietSince ||= Date.now();
        if (Date.now() - quietSince > 3000) return;
      } else {
        quietSince = 0;
      }
      lastOutbox = outbox;
      if (!worker.alive()) throw new Error(`worker died: ${worker.logFile}`);
      if (Date.now() > deadline) throw new Error(`not settled (${what}): ${unpublished} unpublished; ${worker.logFile}`);
      await sleep(300);
    }
  };
  const rowsBefore = new Map<string, Set<string>>();
  const snapshot = async (keepRows = false) => {
    const out: Record<string, string> = {};
    for (const table of SNAPSHOT_TABLES) {
      const [{ h, n }] = await sql.unsafe<{ h: string | null; n: number }[]>(`SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) AS h, count(*)::int AS n FROM ${table} x`);
      out[table] = `${n}:${h}`;
      if (keepRows) rowsBefore.set(table, new Set((await sql.unsafe<{ r: string }[]>(`SELECT x::text AS r FROM ${table} x`)).map((r) => r.r)));
    }
    return out;
  };
  /** a few rows of `table` that differ from the first snapshot (for the failure message) */
  const rowDiff = async (table: string) => {
    const now = new Set((await sql.unsafe<{ r: string }[]>(`SELECT x::text AS r FROM ${table} x`)).map((r) => r.r));
    const was = rowsBefore.get(table) ?? new Set<string>();
    return { removed: [...was].filter((r) => !now.has(r)).slice(0, 3), added: [...now].filter((r) => !was.has(r)).slice(0, 3) };
  };
  const outboxCounts = async () => (await sql<{ crm: number; chessboard: number }[]>`
    SELECT (SELECT count(*)::int FROM crm.outbox) AS crm, (SELECT count(*)::int FROM chessboard.outbox) AS chessboard`)[0]!;
  // the groups (and their committed offsets) are deleted: the consumers subscribe fromBeginning, so the next
  // worker reads every partition from offset 0 (admin.resetOffsets does the same, but at ~5 s per topic)
  const resetToZero = async () => {
    await admin.deleteGroups(groups.map((g) => g.groupId));
    for (const g of groups) {
      const offsets = await admin.fetchOffsets({ groupId: g.groupId, topics: g.topics });
      expect(offsets.flatMap((o) => o.partitions).every((p) => Number(p.offset) < 0)).toBe(true);
    }
  };

  const t0 = Date.now();
  try {
    const first = await startWorker(`replay-${t.prefix}settle`, env);
    workers.push(first);
    await settle(first, 'first consumption');
    const settledAt = secondsSince(t0);
    await first.stop();
    const before = await snapshot(true);
    const outboxBefore = await outboxCounts();
    const [{ messages }] = await sql<{ messages: number }[]>`SELECT ((SELECT count(*) FROM chessboard.inbox) + (SELECT count(*) FROM catalog.inbox) + (SELECT count(*) FROM crm.inbox))::int AS messages`;

    // A. offsets to 0, inboxes as they are
    await resetToZero();
    const a = await startWorker(`replay-${t.prefix}a`, env);
    workers.push(a);
    await settle(a, 'replay A');
    const replayedAAt = secondsSince(t0);
    await a.stop();
    const afterA = await snapshot();
    const outboxA = await outboxCounts();
    const droppedA = a.lines.filter((l) => l.msg === 'consumer no-op' && l.result === 'duplicate').length;

    // B. offsets to 0 and the inboxes emptied: only the handlers' own idempotency stands between the replay and the state
    await sql`TRUNCATE chessboard.inbox, catalog.inbox, crm.inbox`;
    await resetToZero();
    const b = await startWorker(`replay-${t.prefix}b`, env);
    workers.push(b);
    await settle(b, 'replay B');
    await b.stop();
    const afterB = await snapshot();
    const outboxB = await outboxCounts();
    const outcomesB = await sql<{ result: string; n: number }[]>`
      SELECT result, count(*)::int AS n FROM (SELECT result FROM chessboard.inbox UNION ALL SELECT result FROM catalog.inbox UNION ALL SELECT result FROM crm.inbox) x GROUP BY result ORDER BY result`;

    const appliedB = await sql<{ consumer: string; topic: string; detail: string | null; n: number }[]>`
      SELECT consumer, topic, detail, count(*)::int AS n FROM (SELECT consumer, topic, detail, result FROM chessboard.inbox UNION ALL SELECT consumer, topic, detail, result FROM catalog.inbox UNION ALL SELECT consumer, topic, detail, result FROM crm.inbox) x
       WHERE result = 'applied' GROUP BY 1, 2, 3 ORDER BY 4 DESC`;
    const changed = (x: Record<string, string>) => SNAPSHOT_TABLES.filter((tb) => x[tb] !== before[tb]);
    figure('replay', `${opts.label}: every consumed topic replayed from offset 0 (${messages} messages, ${groups.length} consumer groups) — `
      + `A (inbox kept): ${droppedA} dropped as duplicates, tables changed: ${changed(afterA).length}, new outbox rows: ${outboxA.crm + outboxA.chessboard - outboxBefore.crm - outboxBefore.chessboard}; `
      + `B (inbox emptied): outcomes ${outcomesB.map((o) => `${o.result} ${o.n}`).join(', ')}, tables changed: ${changed(afterB).length}, new outbox rows: ${outboxB.crm + outboxB.chessboard - outboxBefore.crm - outboxBefore.chessboard} (settled ${settledAt} s, A ${replayedAAt} s, B ${secondsSince(t0)} s)`,
    { messages, droppedA, changedA: changed(afterA), changedB: changed(afterB), outcomesB });

    expect(messages).toBeGreaterThanOrEqual(opts.objects * 2);
    expect(droppedA).toBeGreaterThanOrEqual(messages);
    expect(afterA).toEqual(before);
    expect(outboxA).toEqual(outboxBefore);
    const diffB = await Promise.all(changed(afterB).map(async (tb) => ({ table: tb, ...(await rowDiff(tb)) })));
    expect(afterB, `changed by replay B: ${JSON.stringify(diffB)}; applied: ${JSON.stringify(appliedB)}`).toEqual(before);
    expect(outboxB).toEqual(outboxBefore);
    expect(outcomesB.find((o) => o.result === 'applied')?.n ?? 0, 'a replayed message changed something').toBe(0);
  } finally {
    await Promise.allSettled(workers.map((w) => (w.alive() ? w.stop() : Promise.resolve())));
    await admin.disconnect();
  }
}
