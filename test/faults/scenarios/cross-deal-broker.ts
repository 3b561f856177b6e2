import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Actor } from '../../../server/auth/actor';
import { insertObjects, insertProject, readObject, type Place } from '../../fixtures/chessboard.fixtures';
import { crmPropertyObjectStatusConsumer } from '../../../server/chessboard/crm-property-object-status.consumer';
import { cancelBookingCommand } from '../../../server/crm/commands/cancel-booking';
import { cancelDealCommand } from '../../../server/crm/commands/cancel-deal';
import { confirmBookingCommand } from '../../../server/crm/commands/confirm-booking';
import { createBookingCommand } from '../../../server/crm/commands/create-booking';
import { extendBookingCommand } from '../../../server/crm/commands/extend-booking';
import { startSaleCommand } from '../../../server/crm/commands/start-sale';
import { createBookingExpirationJob } from '../../../server/crm/booking-expiration.job';
import { createIdempotentProducer, createKafka } from '../../../server/platform/kafka/client';
import { TOPICS } from '../../../server/platform/kafka/topics';
import { createLogger } from '../../../server/platform/logger';
import { projectObjects } from '../../harness/crm-projection';
import type { TestContext } from '../../harness/harness';
import { seededShuffle } from '../../../scripts/seed-data';
import { BrokerDelivery, type RelayedRow } from '../helpers/broker-delivery';
import { CRM_STATUS_CONSUMER as CONSUMER, CRM_STATUS_TOPICS } from '../helpers/consumer-emulation';
import { createPropertyObjectHoldExpirationJob } from '../../../server/chessboard/property-object-hold-expiration.job';
import { figure, secondsSince } from '../helpers/figures';
import { commandContext } from '../../../server/platform/command-context';

/**
 * Cross-deal interleavings through the real broker (issue 15, DESIGN decisions 3 and 7): two or three
 * deals book ONE object one after another through crm's commands (each booking ends — cancel, expiry,
 * confirm + cancel, Deal.Cancel — before the next begins; the last may stay Reserved/Booked/extended, or
 * be sold). Their crm events (booking-created / -confirmed / -extended / -expired / -cancelled,
 * deal-cancelled, deal-sale-started) are then produced to Kafka in a fast-check-chosen order across
 * topics, some twice, and consumed by the real chessboard consumer (startConsumer: inbox, DLQ); in some
 * runs the consumer is restarted mid-way with its commits lost, so the broker redelivers what it had
 * applied. No message is requeued by an operator: DESIGN decision 9 orders every event by its booking's
 * creation time, so none may be refused.
 *
 * Checked per run: chessboard equals crm's final state (crm's active booking, its deal and deadline;
 * Sold after a sale; Free otherwise), no message rejected (no DLQ row, no HOLD_MISMATCH), the
 * hold-expiration job run at crm's clock frees nothing of it, INV-CHS-002 on the row and on every
 * status-changed event, and INV-CHS-003 on the status history (every Crm transition out of a hold was
 * made by the holding deal, or by a newer booking taking it over).
 *
 * `crossDealEveryOrderScenario` adds the exhaustive case: deal 1 creates and cancels, deal 2 creates,
 * confirms and extends, and all 120 orders of those five events go through the broker.
 */

type Ending = 'cancel' | 'expire' | 'confirm-cancel' | 'confirm-expire' | 'cancel-deal';
type LastEnding = Ending | 'keep' | 'confirm' | 'confirm-extend' | 'confirm-sale';
interface History { deals: number; rounds: { deal: number; ending: Ending }[]; last: { deal: number; ending: LastEnding } }
interface Plan { order: number; duplicates: number[]; restartAt: number | null; burst: boolean }

const historyArb: fc.Arbitrary<History> = fc.integer({ min: 2, max: 3 }).chain((deals) => fc.record({
  deals: fc.constant(deals),
  rounds: fc.array(fc.record({
    deal: fc.nat(deals - 1),
    ending: fc.constantFrom<Ending>('cancel', 'expire', 'confirm-cancel', 'confirm-expire', 'cancel-deal'),
  }), { minLength: 1, maxLength: 3 }),
  last: fc.record({
    deal: fc.nat(deals - 1),
    ending: fc.constantFrom<LastEnding>('cancel', 'cancel-deal', 'keep', 'keep', 'confirm', 'confirm-extend', 'confirm-sale', 'expire'),
  }),
}));
const planArb: fc.Arbitrary<Plan> = fc.record({
  order: fc.integer(),
  duplicates: fc.array(fc.nat(1000), { maxLength: 4 }),
  restartAt: fc.option(fc.nat(1000), { freq: 2 }),
  burst: fc.boolean(),
});

const pin: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };

export interface CrossDealStats {
  runs: number; messages: number; duplicatesSent: number; redelivered: number; restarts: number; bursts: number;
  takeOvers: number; lateReleasesIgnored: number; rejected: number; final: Record<string, number>;
}

export async function crossDealBrokerScenario(
  t: TestContext,
  opts: { numRuns: number; seed: number; label: string; maxRestarts?: number; bursts?: boolean; everyOrder?: boolean },
): Promise<CrossDealStats & { everyOrder: number }> {
  const { db, sql } = t.database;
  const logger = createLogger('faults-cross-deal', { level: 'silent' });
  const place: Place = await insertProject(t.database, randomUUID());
  const programId = randomUUID();
  await sql`INSERT INTO crm.booking_programs (id, tenant_id, name, is_paid, reserve_duration_minutes, booking_duration_hours)
    VALUES (${programId}, ${place.tenantId}, 'Free', false, 60, 48)`;
  const kafka = createKafka(t.env);
  const producer = createIdempotentProducer(kafka);
  const admin = kafka.admin();
  await Promise.all([producer.connect(), admin.connect()]);
  const broker = new BrokerDelivery({ database: t.database, env: t.env, logger, kafka, producer, admin }, crmPropertyObjectStatusConsumer);
  await broker.start();
  const stats: CrossDealStats = { runs: 0, messages: 0, duplicatesSent: 0, redelivered: 0, restarts: 0, bursts: 0, takeOvers: 0, lateReleasesIgnored: 0, rejected: 0, final: {} };
  // crm's clock: each run lives in its own hour, far enough in the past that expiry runs on it
  let clock = Date.now() - 400 * 24 * 3600_000;

  /** Plays the history through crm's commands; the crm events about the object, in crm's order. */
  const play = async (h: History) => {
    const [objectId] = await insertObjects(t.database, place, [{ status: 'Free' }]);
    await projectObjects(t.database, [{ id: objectId!, tenantId: place.tenantId, projectId: place.projectId }]);
    const dealIds = Array.from({ length: h.deals }, () => randomUUID());
    await sql`INSERT INTO crm.deals ${sql(dealIds.map((id) => ({ id, tenant_id: place.tenantId, title: 'Deal', status: 'Application' })))}`;
    const ctx = () => commandContext(pin, randomUUID(), new Date((clock += 1000)));
    const expire = async () => {
      clock += 49 * 3600_000; // past a reserve (60 min) and a booking (48 h)
      const at = new Date(clock);
      await createBookingExpirationJob({ now: () => at }).run({
        database: t.database, env: t.env, logger, runId: randomUUID(), signal: new AbortController().signal, trigger: 'manual', kafka,
      });
    };
    const dead = new Set<number>();
    for (const round of [...h.rounds, h.last]) {
      // a cancelled deal books no more: the next living deal books instead
      const deal = [0, 1, 2].map((k) => (round.deal + k) % h.deals).find((d) => !dead.has(d));
      if (deal === undefined) break;
      const b = await db.transaction((tx) => createBookingCommand(tx, { dealId: dealIds[deal]!, propertyObjectId: objectId!, programId }, ctx()));
      const confirm = () => db.transaction((tx) => confirmBookingCommand(tx, { bookingId: b.id }, ctx()));
      const cancel = () => db.transaction((tx) => cancelBookingCommand(tx, { bookingId: b.id, reason: 'fault suite' }, ctx()));
      switch (round.ending) {
        case 'cancel': await cancel(); break;
        case 'expire': await expire(); break;
        case 'confirm-cancel': await confirm(); await cancel(); break;
        case 'confirm-expire': await confirm(); await expire(); break;
        case 'cancel-deal':
          await db.transaction((tx) => cancelDealCommand(tx, { dealId: dealIds[deal]!, reason: 'fault suite' }, ctx()));
          dead.add(deal);
          break;
        case 'confirm': await confirm(); break;
        case 'confirm-extend': {
          const booked = await confirm();
          await db.transaction((tx) => extendBookingCommand(tx, { bookingId: b.id, expectedVersion: booked.version }, ctx()));
          break;
        }
        case 'confirm-sale': await confirm(); await db.transaction((tx) => startSaleCommand(tx, { bookingId: b.id }, ctx())); break;
        case 'keep': break;
      }
    }
    // crm's clock once every command ran: the hold-expiration job runs at it below
    const endedAt = new Date(clock);
    clock += 3600_000;
    const rows = await sql<RelayedRow[]>`SELECT message_id::text, topic, key, payload, headers FROM crm.outbox
      WHERE payload->'payload'->>'propertyObjectId' = ${objectId!} ORDER BY id`;
    // this scenario is the relay: crm's rows are produced below, in the chosen order
    await sql`UPDATE crm.outbox SET published_at = now() WHERE payload->'payload'->>'propertyObjectId' = ${objectId!}`;
    return { objectId: objectId!, endedAt, events: rows.filter((r) => CRM_STATUS_TOPICS.has(r.topic)) };
  };

  /** Where chessboard must end for crm's final state of the object. */
  const expectedOf = async (objectId: string) => {
    const [b] = await sql<{ id: string; deal_id: string; status: string; reserve_expires_at: Date; booking_expires_at: Date | null }[]>`
      SELECT id::text, deal_id::text, status, reserve_expires_at, booking_expires_at FROM crm.bookings
       WHERE property_object_id = ${objectId} AND status IN ('Reserved', 'AwaitingPayment', 'Booked', 'Completed')`;
    if (!b) return { status: 'Free', hold_booking_id: null, hold_deal_id: null, reserved_until: null, booked_until: null };
    if (b.status === 'Completed') return { status: 'Sold', hold_booking_id: null, hold_deal_id: null, reserved_until: null, booked_until: null };
    if (b.status === 'Booked') return { status: 'Booked', hold_booking_id: b.id, hold_deal_id: b.deal_id, reserved_until: null, booked_until: new Date(b.booking_expires_at!) };
    return { status: 'Reserved', hold_booking_id: b.id, hold_deal_id: b.deal_id, reserved_until: new Date(b.reserve_expires_at), booked_until: null };
  };

  const inboxOf = async (events: RelayedRow[]) => sql<{ message_id: string; result: string; detail: string | null }[]>`
    SELECT message_id::text, result, detail FROM chessboard.inbox WHERE consumer = ${CONSUMER} AND message_id IN ${sql(events.map((e) => e.message_id))}`;

  const objectState = async (objectId: string) => {
    const o = await readObject(t.database, objectId);
    return { status: o.status, hold_booking_id: o.hold_booking_id, hold_deal_id: o.hold_deal_id, reserved_until: o.reserved_until, booked_until: o.booked_until };
  };

  /**
   * DESIGN decision 9, checked after every run: nothing refused (no rejected inbox row, no DLQ record, no
   * HOLD_MISMATCH), chessboard equal to crm, and the hold-expiration job at crm's clock leaves it so.
   */
  const checkSettled = async (objectId: string, events: RelayedRow[], endedAt: Date | null, why: string) => {
    const ids = events.map((e) => e.message_id);
    const rejected = (await inboxOf(events)).filter((r) => r.result === 'rejected');
    stats.rejected += rejected.length;
    expect(rejected, `no message refused\n${why}`).toEqual([]);
    expect(await sql`SELECT 1 FROM ops.dlq_messages WHERE message_id::text IN ${sql(ids)}`, `no DLQ row\n${why}`).toHaveLength(0);
    expect(await sql`SELECT 1 FROM chessboard.hold_mismatches WHERE property_object_id = ${objectId}`, `no HOLD_MISMATCH\n${why}`).toHaveLength(0);
    const expected = await expectedOf(objectId);
    expect(await objectState(objectId), why).toEqual(expected);
    stats.final[expected.status] = (stats.final[expected.status] ?? 0) + 1;
    if (!endedAt) return;
    // the safety net at crm's clock: a hold crm still has is not expired, so the job frees nothing of it
    await createPropertyObjectHoldExpirationJob({ now: () => endedAt }).run({
      database: t.database, env: t.env, logger, runId: randomUUID(), signal: new AbortController().signal, trigger: 'manual', kafka,
    });
    expect(await objectState(objectId), `hold-expiration freed what crm holds\n${why}`).toEqual(expected);
    expect(await sql`SELECT 1 FROM chessboard.property_object_status_history WHERE property_object_id = ${objectId} AND status_source = 'ExpirationJob'`).toHaveLength(0);
  };

  const run = async (h: History, plan: Plan) => {
    stats.runs++;
    const { objectId, events, endedAt } = await play(h);
    const order = seededShuffle(events, plan.order);
    // a duplicate is a second copy produced later in the order (a producer retry, a relay re-send)
    const sends: RelayedRow[] = [...order];
    for (const d of plan.duplicates) sends.splice(1 + (d % sends.length), 0, order[d % order.length]!);
    stats.duplicatesSent += sends.length - order.length;
    const restartAt = plan.restartAt === null ? -1 : plan.restartAt % sends.length;
    if (opts.bursts && plan.burst) {
      // all at once: the order is the broker's and the consumer's partitions race (full profile only: not deterministic)
      await broker.deliverBurst(sends);
      stats.messages += sends.length;
      stats.bursts++;
    } else {
      for (const [i, row] of sends.entries()) {
        await broker.deliver(row);
        stats.messages++;
        if (i === restartAt && broker.restarts < (opts.maxRestarts ?? Infinity)) await broker.restartLosingCommits();
      }
    }
    const inbox = await inboxOf(events);
    stats.takeOvers += inbox.filter((r) => r.detail?.includes('taken over')).length;
    stats.lateReleasesIgnored += inbox.filter((r) => r.result === 'no-op').length;
    expect(inbox.length, 'every crm event reached the consumer').toBe(events.length);

    const why = `history ${JSON.stringify(h)} plan ${JSON.stringify(plan)}\n${sends.map((s) => s.topic.split('.')[2]).join(' → ')}\n`
      + inbox.map((r) => `${events.find((e) => e.message_id === r.message_id)!.topic.split('.')[2]}: ${r.result} ${r.detail ?? ''}`).join('\n');
    await checkSettled(objectId, events, endedAt, why);

    // INV-CHS-002 on every state the object passed through, INV-CHS-003 on its history
    const changes = await sql<{ p: { toStatus: string; reservedUntil: string | null; bookedUntil: string | null; holdDealId: string | null } }[]>`
      SELECT payload->'payload' AS p FROM chessboard.outbox WHERE topic = ${TOPICS.propertyObjectStatusChanged} AND payload->'payload'->>'propertyObjectId' = ${objectId} ORDER BY id`;
    for (const { p } of changes) {
      const held = p.toStatus === 'Reserved' || p.toStatus === 'Booked';
      expect((p.toStatus === 'Reserved') === (p.reservedUntil !== null) && (p.toStatus === 'Booked') === (p.bookedUntil !== null) && held === (p.holdDealId !== null),
        `INV-CHS-002 violated by ${JSON.stringify(p)}\n${why}`).toBe(true);
    }
    const history = await sql<{ from_status: string; to_status: string; status_source: string; deal_id: string | null }[]>`
      SELECT from_status, to_status, status_source, deal_id::text FROM chessboard.property_object_status_history WHERE property_object_id = ${objectId} ORDER BY version`;
    let holder: string | null = null;
    for (const step of history) {
      if ((step.from_status === 'Reserved' || step.from_status === 'Booked') && step.status_source === 'Crm') {
        expect(step.deal_id, `INV-CHS-003: ${step.from_status} → ${step.to_status} by another deal\n${why}`).toBe(holder);
      }
      holder = step.to_status === 'Reserved' || step.to_status === 'Booked' ? step.deal_id : null;
    }
  };

  /**
   * Every order of {deal 1 create, deal 1 cancel, deal 2 create, deal 2 confirm, deal 2 extend} (DESIGN decision 9):
   * one object per order. The orders run side by side in five waves — wave i produces the i-th event of every
   * order at once and waits until the consumer committed past all of them — so each object's order is forced
   * (objects do not share state) and 120 orders cost five round trips through the broker instead of 600.
   */
  const everyOrder = async () => {
    const h: History = { deals: 2, rounds: [{ deal: 0, ending: 'cancel' }], last: { deal: 1, ending: 'confirm-extend' } };
    const permutations = <T>(xs: T[]): T[][] => (xs.length <= 1 ? [xs] : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p])));
    const lanes: { indexes: number[]; objectId: string; events: RelayedRow[]; endedAt: Date }[] = [];
    for (const indexes of permutations([0, 1, 2, 3, 4])) {
      const played = await play(h);
      expect(played.events.map((e) => e.topic.split('.')[2])).toEqual(['booking-created', 'booking-cancelled', 'booking-created', 'booking-confirmed', 'booking-extended']);
      lanes.push({ indexes, ...played });
    }
    for (let wave = 0; wave < 5; wave++) {
      await broker.deliverBurst(lanes.map((l) => l.events[l.indexes[wave]!]!));
      stats.messages += lanes.length;
    }
    for (const { indexes, objectId, events } of lanes) {
      stats.runs++;
      const inbox = await inboxOf(events);
      stats.takeOvers += inbox.filter((r) => r.detail?.includes('taken over')).length;
      stats.lateReleasesIgnored += inbox.filter((r) => r.result === 'no-op').length;
      const why = `order ${indexes.join(',')}: ${indexes.map((i) => events[i]!.topic.split('.')[2]).join(' → ')}\n`
        + inbox.map((r) => `${events.find((e) => e.message_id === r.message_id)!.topic.split('.')[2]}: ${r.result} ${r.detail ?? ''}`).join('\n');
      expect(inbox.length, why).toBe(events.length);
      await checkSettled(objectId, events, null, why);
    }
    // the safety net once, at crm's clock when the first order had been played (each play moves crm's clock an
    // hour on, so later ones would see the first bookings legitimately expired): every object is held by deal 2
    // with a deadline after that, so it frees nothing
    const summary = (await createPropertyObjectHoldExpirationJob({ now: () => lanes[0]!.endedAt }).run({
      database: t.database, env: t.env, logger, runId: randomUUID(), signal: new AbortController().signal, trigger: 'manual', kafka,
    })) as { ReservedReleasedCount: number; BookedReleasedCount: number };
    expect(summary.ReservedReleasedCount + summary.BookedReleasedCount, JSON.stringify(summary)).toBe(0);
    for (const { objectId } of lanes) expect(await objectState(objectId)).toEqual(await expectedOf(objectId));
    return lanes.length;
  };

  const t0 = Date.now();
  let failure: unknown;
  let orders = 0;
  try {
    if (opts.everyOrder) orders = await everyOrder();
    await fc.assert(fc.asyncProperty(historyArb, planArb, run), { numRuns: opts.numRuns, seed: opts.seed, endOnFailure: true });
  } catch (e) {
    failure = e;
  } finally {
    stats.redelivered = broker.redelivered;
    stats.restarts = broker.restarts;
    await broker.stop();
    await Promise.all([producer.disconnect(), admin.disconnect()]);
  }
  const seconds = secondsSince(t0);
  figure('cross-deal-broker', `${opts.label}: ${stats.runs} runs (seed ${opts.seed}; ${orders} exhaustive orders), ${stats.messages} messages through Kafka (${stats.duplicatesSent} duplicate copies, `
    + `${stats.restarts} consumer restarts redelivering ${stats.redelivered}, ${stats.bursts} runs sent as one burst), ${stats.takeOvers} hold take-overs, ${stats.lateReleasesIgnored} no-ops, `
    + `${stats.rejected} refusals, final ${JSON.stringify(stats.final)}, violations: ${failure ? 'FOUND' : 0} (${seconds} s; delivering ${Math.round(broker.deliverMs / 1000)} s, restarts ${Math.round(broker.restartMs / 1000)} s)`,
  { ...stats, seed: opts.seed, seconds, failed: !!failure });
  if (failure) throw failure;
  return { ...stats, everyOrder: orders };
}
