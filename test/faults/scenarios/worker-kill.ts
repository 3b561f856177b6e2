import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Actor } from '../../../server/auth/actor';
import { insertObjects, insertProject, type Place } from '../../fixtures/chessboard.fixtures';
import { createBookingCommand } from '../../../server/crm/commands/create-booking';
import { TOPICS, withPrefix } from '../../../server/platform/kafka/topics';
import type { TestContext } from '../../harness/harness';
import { figure, secondsSince } from '../helpers/figures';
import { duplicatesOf, readEverything } from '../helpers/kafka-read';
import { sleep, startWorker, type ManagedProcess } from '../helpers/processes';
import { seedWorld } from '../helpers/world';
import { prng } from '../../../scripts/seed-data';
import { commandContext } from '../../../server/platform/command-context';

/**
 * kill -9 of the worker process in the middle of its work, again and again. Each round seeds work for
 * one target — the hold-expiration job (stuck holds), delisted-retention (old Delisted cards with
 * overrides), the outbox relay and the chessboard consumer (a steady stream of crm bookings written by
 * this test) — starts a worker, waits until that target is visibly working, waits a random moment and
 * kills the process group with SIGKILL (no shutdown hook runs). Right after each kill, with no worker
 * alive: never a partial batch (each released hold has its history, hold_releases row and event; the
 * released / deleted counts are whole batches; each card went with its override; each applied message
 * has its inbox row and vice versa). After the last kill one worker finishes everything: every event is
 * on Kafka (none lost), copies only from re-sent batches, and the consumers applied each message once.
 */

const HOLD_BATCH = 50;
const RETENTION_BATCH = 50;
const RELAY_BATCH = 20;
type Target = 'hold-expiration' | 'retention' | 'relay' | 'consumer';
const TARGETS: Target[] = ['hold-expiration', 'retention', 'relay', 'consumer'];

interface Counters {
  holdsReleasedR: number; holdsReleasedB: number; holdsFree: number; holdReleases: number; jobEvents: number; holdsLeft: number;
  cards: number; overrides: number; cardsDeleted: number;
  published: number; inbox: number; appliedCreates: number; reservedByCrm: number; reserveHistory: number;
}

/** `bookings`: the capacity of the booking stream (~8 per second until the last kill) */
export async function workerKillScenario(t: TestContext, opts: {
  kills: number; bookings: number; seed: number; label: string; targets?: Target[];
  /** false (reduced profile): the last worker is not waited for until its consumers have applied everything
   * (a group with killed members lets a new consumer in only after Kafka's session timeout, ~30 s each) */
  waitForConsumers?: boolean;
}): Promise<void> {
  const waitForConsumers = opts.waitForConsumers ?? true;
  const { sql } = t.database;
  const random = prng(opts.seed);
  const targets = opts.targets ?? TARGETS;
  const holdsPlace: Place = await insertProject(t.database);
  const world = await seedWorld(t.database, opts.bookings);
  const env = {
    DATABASE_URL: t.url, KAFKA_BROKERS: t.env.KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: t.prefix,
    HOLD_EXPIRATION_BATCH_SIZE: String(HOLD_BATCH),
    DELISTED_RETENTION_SCHEDULE: '* * * * * *', DELISTED_RETENTION_TIMEZONE: 'UTC',
    DELISTED_RETENTION_BATCH_SIZE: String(RETENTION_BATCH), DELISTED_RETENTION_MAX_BATCHES_PER_RUN: '2',
    OUTBOX_RELAY_BATCH_SIZE: String(RELAY_BATCH),
  };
  let cardsSeeded = 0;
  let holdsSeeded = 0;

  const seedHolds = async (n: number) => {
    const overdue = new Date(Date.now() - 3600_000);
    await insertObjects(t.database, holdsPlace, Array.from({ length: n }, (_, i) => ({ status: i % 2 ? 'Booked' as const : 'Reserved' as const, timer: overdue })));
    holdsSeeded += n;
  };
  const seedCards = async (n: number) => {
    const old = new Date(Date.now() - 40 * 24 * 3600_000).toISOString();
    const projectId = randomUUID();
    const cards = Array.from({ length: n }, (_, i) => ({
      id: randomUUID(), project_id: projectId, building_id: projectId, developer_id: world.tenantId, number: String(i), floor: 1, rooms: 1,
      area: 30, price: 1_000_000, sale_status: 'Free', status: 'Delisted', updated_at: old, created_at: old,
    }));
    for (let i = 0; i < cards.length; i += 1000) {
      const chunk = cards.slice(i, i + 1000);
      await sql`INSERT INTO catalog.property_object_cards ${sql(chunk as never)}`;
      await sql`INSERT INTO catalog.property_object_display_overrides ${sql(chunk.map((c) => ({ id: randomUUID(), property_object_id: c.id, title: 'promo' })) as never)}`;
    }
    cardsSeeded += n;
  };

  const counters = async (): Promise<Counters> => {
    const [c] = await sql<Counters[]>`
      SELECT (SELECT count(*)::int FROM chessboard.hold_releases WHERE project_id = ${holdsPlace.projectId} AND from_status = 'Reserved') AS "holdsReleasedR",
             (SELECT count(*)::int FROM chessboard.hold_releases WHERE project_id = ${holdsPlace.projectId} AND from_status = 'Booked') AS "holdsReleasedB",
             (SELECT count(*)::int FROM chessboard.property_objects WHERE project_id = ${holdsPlace.projectId} AND status = 'Free' AND status_source = 'ExpirationJob') AS "holdsFree",
             (SELECT count(*)::int FROM chessboard.hold_releases WHERE project_id = ${holdsPlace.projectId}) AS "holdReleases",
             (SELECT count(*)::int FROM chessboard.outbox WHERE topic = ${TOPICS.propertyObjectStatusChanged} AND payload->'payload'->>'statusSource' = 'ExpirationJob') AS "jobEvents",
             (SELECT count(*)::int FROM chessboard.property_objects WHERE project_id = ${holdsPlace.projectId} AND status IN ('Reserved', 'Booked')) AS "holdsLeft",
             (SELECT count(*)::int FROM catalog.property_object_cards WHERE status = 'Delisted') AS cards,
             (SELECT count(*)::int FROM catalog.property_object_display_overrides) AS overrides,
             0 AS "cardsDeleted",
             (SELECT count(*)::int FROM crm.outbox WHERE published_at IS NOT NULL) + (SELECT count(*)::int FROM chessboard.outbox WHERE published_at IS NOT NULL) AS published,
             (SELECT count(*)::int FROM chessboard.inbox) + (SELECT count(*)::int FROM catalog.inbox) AS inbox,
             (SELECT count(*)::int FROM chessboard.inbox WHERE topic = ${TOPICS.bookingCreated} AND result = 'applied') AS "appliedCreates",
             (SELECT count(*)::int FROM chessboard.property_objects WHERE project_id = ${world.projectId} AND status = 'Reserved') AS "reservedByCrm",
             (SELECT count(*)::int FROM chessboard.property_object_status_history h JOIN chessboard.property_objects o ON o.id = h.property_object_id
               WHERE o.project_id = ${world.projectId} AND h.to_status = 'Reserved') AS "reserveHistory"`;
    c!.cardsDeleted = cardsSeeded - c!.cards;
    return c!;
  };

  /** Never a partial batch: checked with no worker alive. */
  const checkAtomicity = (c: Counters, where: string) => {
    expect(c.holdsFree, `released holds vs their hold_releases rows ${where}`).toBe(c.holdReleases);
    expect(c.jobEvents, `released holds vs their status-changed events ${where}`).toBe(c.holdReleases);
    expect(c.holdsReleasedR % HOLD_BATCH, `Reserved holds released in whole batches ${where}`).toBe(0);
    expect(c.holdsReleasedB % HOLD_BATCH, `Booked holds released in whole batches ${where}`).toBe(0);
    expect(c.cardsDeleted % RETENTION_BATCH, `cards deleted in whole batches ${where}`).toBe(0);
    expect(c.overrides, `each deleted card went with its override ${where}`).toBe(c.cards);
    expect(c.reservedByCrm, `each applied booking-created has its inbox row, and each inbox row its effect ${where}`).toBe(c.appliedCreates);
    expect(c.reserveHistory, `no booking-created applied twice ${where}`).toBe(c.appliedCreates);
  };

  // ---- the crm side: bookings keep coming while workers die (commands in this process, as the web makes them)
  const pin: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };
  let made = 0;
  let stopStream = false;
  const stream = (async () => {
    while (!stopStream && made < opts.bookings) {
      const i = made++;
      await t.database.db.transaction((tx) => createBookingCommand(tx, { dealId: world.dealIds[i]!, propertyObjectId: world.objectIds[i]!, programId: world.programId }, commandContext(pin, randomUUID())));
      await sleep(100);
    }
  })();

  const t0 = Date.now();
  const phases = { kills: 0, drained: 0 };
  const kills: { target: Target; afterMs: number; openTransactions: number; queries: string[] }[] = [];
  const workers: ManagedProcess[] = [];
  try {
    for (let k = 0; k < opts.kills; k++) {
      const target = targets[k % targets.length]!;
      if (target === 'hold-expiration') await seedHolds(6 * HOLD_BATCH);
      if (target === 'retention') await seedCards(8 * RETENTION_BATCH);
      const before = await counters();
      // not waiting for "worker started": that line comes after the consumers joined their groups, which waits
      // for Kafka to drop the killed worker's members; the jobs run before that
      const worker = await startWorker(`kill-${t.prefix}${k}-${target}`, env, { waitStarted: false });
      workers.push(worker);
      const progressed = (c: Counters) =>
        target === 'hold-expiration' ? c.holdReleases > before.holdReleases
          : target === 'retention' ? c.cardsDeleted > before.cardsDeleted
            : target === 'relay' ? c.published > before.published
              : c.inbox > before.inbox;
      // the consumer gets its partitions only after the group dropped the killed member (session timeout, 30 s)
      const deadline = Date.now() + (target === 'consumer' ? 120_000 : 60_000);
      for (;;) {
        if (progressed(await counters())) break;
        if (!worker.alive()) throw new Error(`worker died by itself: ${worker.logFile}`);
        if (Date.now() > deadline) throw new Error(`${target} made no progress within the deadline; ${worker.logFile}`);
        await sleep(50);
      }
      // a random moment, then the first instant the worker has a transaction open (≤ 3 s): the kill lands
      // mid-batch / mid-message as often as the race between observing and killing allows
      const afterMs = Math.floor(random() * 300);
      await sleep(afterMs);
      let open: { query: string }[] = [];
      for (const until = Date.now() + 3000; Date.now() < until;) {
        open = await sql<{ query: string }[]>`
          SELECT left(query, 60) AS query FROM pg_stat_activity
           WHERE datname = current_database() AND application_name = 'pin-worker' AND xact_start IS NOT NULL`;
        if (open.length > 0) break;
      }
      await worker.kill9();
      kills.push({ target, afterMs, openTransactions: open.length, queries: open.map((q) => q.query) });
      // the killed backends' transactions roll back as soon as PostgreSQL notices the closed sockets
      await sleep(300);
      checkAtomicity(await counters(), `after kill ${k + 1} (${target})`);
    }
    stopStream = true;
    await stream;
    phases.kills = secondsSince(t0);

    // ---- one last worker finishes everything
    const last = await startWorker(`kill-${t.prefix}final`, env, { waitStarted: false });
    workers.push(last);
    const deadline = Date.now() + 240_000;
    let c: Counters;
    for (;;) {
      c = await counters();
      const [{ unpublished }] = await sql<{ unpublished: number }[]>`
        SELECT (SELECT count(*)::int FROM crm.outbox WHERE published_at IS NULL) + (SELECT count(*)::int FROM chessboard.outbox WHERE published_at IS NULL) AS unpublished`;
      if (c.holdsLeft === 0 && c.cards === 0 && (!waitForConsumers || c.reservedByCrm === made) && unpublished === 0) break;
      if (!last.alive()) throw new Error(`the final worker died: ${last.logFile}`);
      if (Date.now() > deadline) throw new Error(`not finished after the last restart: ${JSON.stringify({ ...c, made, unpublished })}`);
      await sleep(500);
    }
    // the card projection has caught up with every status change (its inbox holds one row per event)
    const [{ statusEvents }] = await sql<{ statusEvents: number }[]>`SELECT count(*)::int AS "statusEvents" FROM chessboard.outbox WHERE topic = ${TOPICS.propertyObjectStatusChanged}`;
    for (; waitForConsumers;) {
      const [{ seen }] = await sql<{ seen: number }[]>`SELECT count(*)::int AS seen FROM catalog.inbox WHERE topic = ${TOPICS.propertyObjectStatusChanged}`;
      if (seen >= statusEvents) break;
      if (Date.now() > deadline) throw new Error(`card projection behind: ${seen}/${statusEvents}`);
      await sleep(500);
    }
    phases.drained = secondsSince(t0);
    await last.stop();
    checkAtomicity(c, 'at the end');
  } finally {
    stopStream = true;
    await stream.catch(() => {});
    await Promise.allSettled(workers.map((w) => (w.alive() ? w.stop() : Promise.resolve())));
  }

  // ---- nothing lost on Kafka, copies only from re-sent batches, each message applied once
  const crmRows = await sql<{ message_id: string; topic: string }[]>`SELECT message_id::text, topic FROM crm.outbox`;
  const cbRows = await sql<{ message_id: string; topic: string }[]>`SELECT message_id::text, topic FROM chessboard.outbox`;
  const topicsOf = (rows: { topic: string }[]) => [...new Set(rows.map((r) => withPrefix(t.prefix, r.topic)))];
  const onKafkaCrm = await readEverything(t.env.KAFKA_BROKERS, topicsOf(crmRows));
  const onKafkaCb = await readEverything(t.env.KAFKA_BROKERS, topicsOf(cbRows));
  const crmIds = new Set(onKafkaCrm.map((m) => m.messageId));
  const cbIds = new Set(onKafkaCb.map((m) => m.messageId));
  const lostCrm = crmRows.filter((r) => !crmIds.has(r.message_id)).length;
  const lostCb = cbRows.filter((r) => !cbIds.has(r.message_id)).length;
  const dupCrm = duplicatesOf(onKafkaCrm).extraCopies;
  const dupCb = duplicatesOf(onKafkaCb).extraCopies;
  const absorbed = workers.flatMap((w) => w.lines).filter((l) => l.msg === 'consumer no-op' && l.result === 'duplicate').length;
  const [{ applied, inboxRows, distinctInbox }] = await sql<{ applied: number; inboxRows: number; distinctInbox: number }[]>`
    SELECT (SELECT count(*)::int FROM chessboard.inbox WHERE topic = ${TOPICS.bookingCreated} AND result = 'applied') AS applied,
           (SELECT count(*)::int FROM chessboard.inbox) AS "inboxRows", (SELECT count(DISTINCT message_id)::int FROM chessboard.inbox) AS "distinctInbox"`;
  const byTarget = TARGETS.map((tg) => `${tg} ${kills.filter((k) => k.target === tg).length}`).join(', ');
  const inTx = kills.filter((k) => k.openTransactions > 0).length;

  figure('worker-kill', `${opts.label}: ${kills.length} × kill -9 (${byTarget}; ${inTx} with a transaction open, seed ${opts.seed}) — 0 partial batches; `
    + `after restart everything processed: ${holdsSeeded} holds released, ${cardsSeeded} cards purged, ${waitForConsumers ? `${made} bookings applied once each` : `${made} bookings relayed (consumers: full profile)`}; `
    + `lost events: ${lostCrm + lostCb}; duplicates on Kafka: ${dupCrm} crm + ${dupCb} chessboard events (re-sent batches, at-least-once), `
    + `${absorbed} redeliveries dropped by the consumers' inboxes (kills done at ${phases.kills} s, drained at ${phases.drained} s, ${secondsSince(t0)} s)`,
  { kills: kills.length, withOpenTransaction: inTx, holds: holdsSeeded, cards: cardsSeeded, bookings: made, lost: lostCrm + lostCb, duplicates: dupCrm + dupCb, absorbed, seed: opts.seed });

  const lostRows = [...crmRows.filter((r) => !crmIds.has(r.message_id)), ...cbRows.filter((r) => !cbIds.has(r.message_id))].map((r) => r.message_id);
  const lostDetail = lostRows.length
    ? JSON.stringify(await sql`SELECT id, message_id, topic, key, created_at, published_at, attempts, last_error FROM crm.outbox WHERE message_id = ANY(${lostRows}::uuid[])
        UNION ALL SELECT id, message_id, topic, key, created_at, published_at, attempts, last_error FROM chessboard.outbox WHERE message_id = ANY(${lostRows}::uuid[])`)
    : '';
  expect(lostCrm, lostDetail).toBe(0);
  expect(lostCb, lostDetail).toBe(0);
  if (waitForConsumers) expect(applied).toBe(made);
  expect(inboxRows).toBe(distinctInbox);
  // at-least-once allows copies only of batches in flight when a worker died: at most one relay batch per outbox per kill
  expect(dupCrm + dupCb).toBeLessThanOrEqual(kills.length * RELAY_BATCH * 2);
  expect(kills.length).toBe(opts.kills);
}
