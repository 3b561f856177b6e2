import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Actor } from '../../../server/auth/actor';
import { confirmBookingCommand } from '../../../server/crm/commands/confirm-booking';
import { createBookingCommand } from '../../../server/crm/commands/create-booking';
import { extendBookingCommand } from '../../../server/crm/commands/extend-booking';
import { TOPICS, withPrefix } from '../../../server/platform/kafka/topics';
import type { TestContext } from '../../harness/harness';
import { figure, secondsSince } from '../helpers/figures';
import { randomPrefix, startOwnKafka } from '../helpers/infra';
import { duplicatesOf, readEverything } from '../helpers/kafka-read';
import { sleep, startWorker, workerHealth } from '../helpers/processes';
import { seedWorld } from '../helpers/world';
import { commandContext } from '../../../server/platform/command-context';

/**
 * The Kafka broker (this scenario's own; the shared one is never touched) is stopped for `downMs`
 * while bookings keep being created — and every fifth one confirmed and extended twice, so one
 * booking has several events on one topic. Commands only write PostgreSQL (transactional outbox), so
 * none may fail. After the broker is back the relay drains the backlog without a restart; no event is
 * lost; the chessboard consumer applies each booking's events in their order (every extension is
 * applied — an extension consumed after a newer one would be a stale no-op and leave no history row).
 */
export async function brokerOutageScenario(t: TestContext, opts: { downMs: number; bookings: number; label: string }): Promise<void> {
  const { sql } = t.database;
  const kafka = await startOwnKafka(`broker-${opts.bookings}`);
  const prefix = randomPrefix('bk');
  await kafka.createTopics(prefix);
  const env = { DATABASE_URL: t.url, KAFKA_BROKERS: kafka.brokers, KAFKA_TOPIC_PREFIX: prefix, OUTBOX_RELAY_BATCH_SIZE: '100' };
  const worker = await startWorker(`broker-outage-${prefix}`, env);
  try {
    const world = await seedWorld(t.database, opts.bookings);
    const pin: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };
    const command = <T>(fn: Parameters<typeof t.database.db.transaction<T>>[0]) => t.database.db.transaction(fn);
    let failed = 0;
    let made = 0;
    const extended: string[] = [];
    // bookings at a steady pace over the whole window: a fifth before the stop, the rest during and after it
    const paceMs = Math.max(5, Math.floor((opts.downMs * 1.6) / opts.bookings));
    const stream = (async () => {
      for (let i = 0; i < opts.bookings; i++) {
        try {
          const ctx = () => commandContext(pin, randomUUID());
          const b = await command((tx) => createBookingCommand(tx, { dealId: world.dealIds[i]!, propertyObjectId: world.objectIds[i]!, programId: world.programId }, ctx()));
          if (i % 5 === 0) {
            await command((tx) => confirmBookingCommand(tx, { bookingId: b.id }, ctx()));
            await command((tx) => extendBookingCommand(tx, { bookingId: b.id, idempotencyKey: randomUUID() }, ctx()));
            await command((tx) => extendBookingCommand(tx, { bookingId: b.id, idempotencyKey: randomUUID() }, ctx()));
            extended.push(b.id);
          }
          made++;
        } catch {
          failed++;
        }
        await sleep(paceMs);
      }
    })();

    await sleep(Math.floor(opts.downMs * 0.3));
    await kafka.stop();
    const madeAtStop = made;
    await sleep(opts.downMs);
    const madeDuringOutage = made - madeAtStop;
    const [{ backlog }] = await sql<{ backlog: number }[]>`SELECT count(*)::int AS backlog FROM crm.outbox WHERE published_at IS NULL`;
    const healthDuringOutage = await workerHealth(worker);
    await kafka.start();
    const restartedAt = Date.now();
    await stream;

    // the backlog drains and the consumer applies everything, without touching the worker
    const deadline = Date.now() + 240_000;
    let drainedAfter = 0;
    let appliedAfter = 0;
    for (;;) {
      const [s] = await sql<{ unpublished: number; events: number; consumed: number }[]>`
        SELECT (SELECT count(*)::int FROM crm.outbox WHERE published_at IS NULL) + (SELECT count(*)::int FROM chessboard.outbox WHERE published_at IS NULL) AS unpublished,
               (SELECT count(*)::int FROM crm.outbox WHERE topic <> ${TOPICS.bookingPaid}) AS events,
               (SELECT count(*)::int FROM chessboard.inbox) AS consumed`;
      if (s!.unpublished === 0 && !drainedAfter) drainedAfter = secondsSince(restartedAt);
      if (s!.consumed === s!.events && !appliedAfter) appliedAfter = secondsSince(restartedAt);
      if (drainedAfter && appliedAfter) break;
      if (!worker.alive()) throw new Error(`the worker died: ${worker.logFile}`);
      if (Date.now() > deadline) throw new Error(`backlog not drained after the broker came back: ${JSON.stringify(s)}; ${worker.logFile}`);
      await sleep(250);
    }

    const [objects] = await sql<{ reserved: number; booked: number }[]>`
      SELECT count(*) FILTER (WHERE status = 'Reserved')::int AS reserved, count(*) FILTER (WHERE status = 'Booked')::int AS booked
        FROM chessboard.property_objects WHERE project_id = ${world.projectId}`;

    // nothing lost: every crm event is on Kafka
    const rows = await sql<{ message_id: string; topic: string }[]>`SELECT message_id::text, topic FROM crm.outbox`;
    const onKafka = await readEverything(kafka.brokers, [...new Set(rows.map((r) => withPrefix(prefix, r.topic)))]);
    const ids = new Set(onKafka.map((m) => m.messageId));
    const lost = rows.filter((r) => !ids.has(r.message_id)).length;
    const { extraCopies } = duplicatesOf(onKafka);

    // per-booking order: each booking's two extensions (one topic, one key) reached the consumer in order — both applied, in version order
    const extends_ = await sql<{ booking_id: string; version: number }[]>`
      SELECT h.booking_id::text, (o.payload->'payload'->>'bookingVersion')::int AS version
        FROM chessboard.property_object_status_history h
        JOIN crm.outbox o ON o.message_id = h.causation_id
       WHERE h.reason LIKE ${`${TOPICS.bookingExtended}%`} ORDER BY h.id`;
    const perBooking = new Map<string, number[]>();
    for (const e of extends_) perBooking.set(e.booking_id, [...(perBooking.get(e.booking_id) ?? []), e.version]);
    const outOfOrder = [...perBooking.values()].filter((v) => v.length !== 2 || v[0]! >= v[1]!).length + (extended.length - perBooking.size);
    const staleExtends = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM chessboard.inbox WHERE topic = ${TOPICS.bookingExtended} AND result <> 'applied'`;

    figure('broker-outage', `${opts.label}: broker down ${opts.downMs / 1000} s while ${made} bookings were created (${madeDuringOutage} during the outage, ${extended.length} also confirmed + extended twice): `
      + `${failed} failed commands, backlog ${backlog} rows at the restart drained ${drainedAfter} s after it (all applied after ${appliedAfter} s), ${lost} lost, `
      + `${extraCopies} duplicates, per-booking order: ${outOfOrder} out of order / ${staleExtends[0]!.n} stale; worker /health during the outage ${healthDuringOutage?.status ?? 'no answer'}`,
    { downMs: opts.downMs, bookings: made, duringOutage: madeDuringOutage, failed, backlog, drainedAfter, appliedAfter, lost, duplicates: extraCopies, outOfOrder });

    expect(failed).toBe(0);
    expect(made).toBe(opts.bookings);
    expect(madeDuringOutage).toBeGreaterThan(0);
    expect(backlog).toBeGreaterThan(0);
    expect(lost).toBe(0);
    expect(objects).toEqual({ reserved: made - extended.length, booked: extended.length });
    expect(outOfOrder, JSON.stringify({ bad: [...perBooking].filter(([, v]) => v.length !== 2 || v[0]! >= v[1]!), missing: extended.filter((b) => !perBooking.has(b)),
      history: await sql`SELECT h.booking_id, h.from_status, h.to_status, h.reason, h.causation_id FROM chessboard.property_object_status_history h
        WHERE h.booking_id = ANY(${[...perBooking].filter(([, v]) => v.length !== 2 || v[0]! >= v[1]!).map(([b]) => b)}::uuid[]) ORDER BY h.id` })).toBe(0);
    expect(staleExtends[0]!.n).toBe(0);
    expect(worker.alive()).toBe(true);
  } finally {
    await worker.stop();
    await kafka.close();
  }
}
