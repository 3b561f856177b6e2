import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Actor } from '../../../server/auth/actor';
import { createPropertyObjectHoldExpirationJob } from '../../../server/chessboard/property-object-hold-expiration.job';
import { createBookingExpirationJob } from '../../../server/crm/booking-expiration.job';
import { cancelBookingCommand } from '../../../server/crm/commands/cancel-booking';
import { cancelDealCommand } from '../../../server/crm/commands/cancel-deal';
import { confirmBookingCommand } from '../../../server/crm/commands/confirm-booking';
import { confirmPaymentCommand } from '../../../server/crm/commands/confirm-payment';
import { createBookingCommand } from '../../../server/crm/commands/create-booking';
import { seedRequisiteSet } from '../../fixtures/profile.fixtures';
import { extendBookingCommand } from '../../../server/crm/commands/extend-booking';
import { startSaleCommand } from '../../../server/crm/commands/start-sale';
import { uploadContractCommand } from '../../../server/crm/commands/upload-contract';
import { uploadReceiptCommand } from '../../../server/crm/commands/upload-receipt';
import { isAppError } from '../../../server/platform/errors';
import type { JobContext } from '../../../server/platform/jobs/types';
import type { Env } from '../../../server/main/env';
import { createKafka } from '../../../server/platform/kafka/client';
import { TOPICS } from '../../../server/platform/kafka/topics';
import { createLogger } from '../../../server/platform/logger';
import { projectObjects } from '../../harness/crm-projection';
import type { TestContext } from '../../harness/harness';
import { CRM_STATUS_CONSUMER as CONSUMER, CRM_STATUS_TOPICS as CONSUMED_TOPICS, deliverCrmEvent } from '../helpers/consumer-emulation';
import { figure, secondsSince } from '../helpers/figures';
import { seededShuffle } from '../../../scripts/seed-data';
import { commandContext, type CommandContext } from '../../../server/platform/command-context';

/**
 * Randomized interleavings (fast-check) of the Booking saga against real PostgreSQL: crm commands
 * (create / confirm / the paid path / extend / cancel / start sale / cancel deal), the
 * booking-expiration job, the hold-expiration safety net, the passing of time, and the chessboard
 * consumer applying the produced outbox events in a fast-check-chosen order — out of order across
 * topics and bookings, duplicated, and sometimes redelivered past the inbox (at-least-once with a
 * lost inbox row). The consumer handler runs in-process exactly as the consumer runner runs it (inbox
 * row + handler in one transaction; a RejectMessage is recorded as 'rejected' and goes to the DLQ).
 *
 * Checked after every step: INV-BKG-001 (one active booking per object) and INV-CHS-002 (timers and
 * hold exactly in the statuses that own them). At the end of each run: INV-CHS-002 on every state the
 * object passed through (each status-changed event), INV-CHS-003 (every Crm transition out of a hold
 * was made by the holding deal; a hold names a booking of that deal on that object), "the object is in
 * the status its last winning booking event implies" (the last applied event, or a later safety-net
 * release), and — once every event was delivered and the DLQ requeued once, as the runbook says —
 * chessboard agrees with crm: the active booking's hold, Sold after a sale, Free otherwise.
 */

const OBJECTS = 3;
const DEALS = 3;
const T0 = new Date('2026-03-02T09:00:00.000Z');
const ADVANCE_MINUTES = [1, 20, 59, 61, 75, 24 * 60, 47 * 60, 49 * 60, 60 * 60];
const ACTIVE = ['Reserved', 'AwaitingPayment', 'Booked'];

type Action =
  | { k: 'create'; deal: number; object: number; paid: boolean }
  | { k: 'confirm' | 'extend' | 'cancel' | 'startSale' | 'paidStep'; booking: number }
  | { k: 'cancelDeal'; deal: number }
  | { k: 'advance'; minutes: number }
  | { k: 'expire' }
  | { k: 'safetyNet' }
  | { k: 'deliver'; pick: number };

const bookingRef = fc.nat(40);
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ k: fc.constant('create' as const), deal: fc.nat(DEALS - 1), object: fc.nat(OBJECTS - 1), paid: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('confirm' as const), booking: bookingRef }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('paidStep' as const), booking: bookingRef }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('extend' as const), booking: bookingRef }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('cancel' as const), booking: bookingRef }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('startSale' as const), booking: bookingRef }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('cancelDeal' as const), deal: fc.nat(DEALS - 1) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('advance' as const), minutes: fc.constantFrom(...ADVANCE_MINUTES) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'expire' as const }) },
  { weight: 2, arbitrary: fc.constant({ k: 'safetyNet' as const }) },
  { weight: 8, arbitrary: fc.record({ k: fc.constant('deliver' as const), pick: fc.nat(1000) }) },
);

interface OutboxRow { id: string; message_id: string; topic: string; payload: Record<string, unknown> }
interface Delivery { messageId: string; topic: string; objectId: string | null; bookingId: string | null; outcome: 'applied' | 'no-op' | 'duplicate' | 'rejected'; code?: string; step: number }

export interface InterleavingStats {
  runs: number;
  steps: number;
  commandsOk: number;
  commandsRefused: number;
  deliveries: Record<string, number>;
  duplicatesDelivered: number;
  bypassedInbox: number;
  safetyNetReleases: number;
  mismatches: number;
  requeued: number;
  /** what the applied / no-op deliveries did (catch-up, superseded booking, stale version, tombstone, …) */
  details: Record<string, number>;
}

function detailKind(detail: string): string {
  if (/catch-up/.test(detail)) return 'catch-up';
  if (/superseded/.test(detail)) return 'superseded';
  if (/late create of an earlier booking/.test(detail)) return 'late-create-of-earlier-booking';
  if (/stale bookingVersion/.test(detail)) return 'stale-version';
  if (/already released/.test(detail)) return 'tombstone';
  if (/stale release/.test(detail)) return 'stale-release';
  if (/release is a no-op/.test(detail)) return 'release-of-free';
  if (/already held|already Sold/.test(detail)) return 'already';
  if (/without a booking/.test(detail)) return 'deal-without-booking';
  return detail.split(' ')[0]!;
}

export async function interleavingsScenario(t: TestContext, opts: { numRuns: number; seed: number; maxActions: number; label: string }): Promise<InterleavingStats> {
  const { db, sql } = t.database;
  const logger = createLogger('faults-interleavings', { level: 'silent' });
  const tenantId = randomUUID();
  const pin: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };
  const projectId = randomUUID();
  const buildingId = randomUUID();
  const freeProgram = randomUUID();
  const paidProgram = randomUUID();
  await sql`INSERT INTO chessboard.projects (id, tenant_id, name, city) VALUES (${projectId}, ${tenantId}, 'Faults', 'Test')`;
  await sql`INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors) VALUES (${buildingId}, ${tenantId}, ${projectId}, 'B', 1, 5)`;
  await sql`INSERT INTO crm.booking_programs (id, tenant_id, name, is_paid, reserve_duration_minutes, booking_duration_hours)
            VALUES (${freeProgram}, ${tenantId}, 'Free', false, 60, 48), (${paidProgram}, ${tenantId}, 'Paid', true, 60, 48)`;
  // a paid booking carries the buyer's requisites (needed before upload-contract)
  const requisiteSet = await seedRequisiteSet(t, pin, undefined, tenantId);
  const kafka = createKafka(t.env);
  const stats: InterleavingStats = {
    runs: 0, steps: 0, commandsOk: 0, commandsRefused: 0, deliveries: {}, duplicatesDelivered: 0, bypassedInbox: 0, safetyNetReleases: 0, mismatches: 0, requeued: 0, details: {},
  };

  const resetTables = () => sql.unsafe(`
    DELETE FROM chessboard.inbox; DELETE FROM chessboard.outbox; DELETE FROM chessboard.crm_booking_versions;
    DELETE FROM chessboard.property_object_status_history; DELETE FROM chessboard.hold_releases; DELETE FROM chessboard.hold_mismatches;
    DELETE FROM chessboard.property_objects; DELETE FROM crm.property_objects;
    DELETE FROM crm.booking_timeline; DELETE FROM crm.outbox; DELETE FROM crm.idempotency_keys; DELETE FROM crm.bookings; DELETE FROM crm.deals;`);

  const run = async (actions: Action[], finalSeed: number, bypassEvery: number) => {
    stats.runs++;
    await resetTables();
    let clock = new Date(T0);
    const objectIds = Array.from({ length: OBJECTS }, () => randomUUID());
    const dealIds = Array.from({ length: DEALS }, () => randomUUID());
    await sql`INSERT INTO chessboard.property_objects ${sql(objectIds.map((id, i) => ({
      id, tenant_id: tenantId, project_id: projectId, building_id: buildingId, section: 1, floor: 1 + i, number: String(100 + i),
      rooms: 1, area: 40, price: 5_000_000, status: 'Free', status_source: 'Import', version: 1,
    })))}`;
    // crm's view of the objects (DESIGN decision 8), as its projection consumer would have it
    await projectObjects(t.database, objectIds.map((id) => ({ id, tenantId, projectId })));
    await sql`INSERT INTO crm.deals ${sql(dealIds.map((id) => ({ id, tenant_id: tenantId, title: 'Deal', status: 'Application' })))}`;
    const bookingIds: string[] = [];
    const deliveries: Delivery[] = [];
    const safetyNet: { objectId: string; step: number }[] = [];
    let step = 0;

    const command = async (fn: (ctx: CommandContext<Actor>) => Promise<unknown>) => {
      try {
        await fn(commandContext(pin, randomUUID(), clock));
        stats.commandsOk++;
      } catch (e) {
        if (!isAppError(e)) throw e;
        stats.commandsRefused++;
      }
    };
    // mostly the latest bookings (a manager works on what is open), sometimes any earlier one
    const bookingAt = (i: number) => (bookingIds.length ? bookingIds[bookingIds.length - 1 - ((i < 30 ? i % 2 : i) % bookingIds.length)] : undefined);

    const producedEvents = async (): Promise<OutboxRow[]> => {
      const rows = await sql<OutboxRow[]>`SELECT id::text, message_id::text, topic, payload FROM crm.outbox ORDER BY id`;
      return rows.filter((r) => CONSUMED_TOPICS.has(r.topic));
    };

    /** One delivery as the consumer runner makes it (helpers/consumer-emulation.ts). */
    const deliver = async (row: OutboxRow, bypassInbox: boolean): Promise<Delivery> => {
      const payload = (row.payload as { payload: { propertyObjectId?: string | null; bookingId?: string | null } }).payload;
      const result = await deliverCrmEvent(t.database, row, { now: clock, logger, bypassInbox });
      if (result.detail && result.outcome !== 'rejected') stats.details[detailKind(result.detail)] = (stats.details[detailKind(result.detail)] ?? 0) + 1;
      const delivery: Delivery = {
        messageId: row.message_id, topic: row.topic, objectId: payload.propertyObjectId ?? null, bookingId: payload.bookingId ?? null, step,
        outcome: result.outcome, code: result.code,
      };
      if (deliveries.some((d) => d.messageId === row.message_id)) stats.duplicatesDelivered++;
      if (bypassInbox) stats.bypassedInbox++;
      stats.deliveries[delivery.outcome] = (stats.deliveries[delivery.outcome] ?? 0) + 1;
      deliveries.push(delivery);
      return delivery;
    };

    const jobContext = (): JobContext<Env> => ({
      database: t.database, env: t.env, logger, runId: randomUUID(), signal: new AbortController().signal, trigger: 'manual', kafka,
    });

    /** INV-BKG-001 and INV-CHS-002 on the current rows (the database also enforces both). */
    const checkStepInvariants = async (where: string) => {
      const [r] = await sql<{ doubleActive: number; chs002: number }[]>`
        SELECT (SELECT count(*)::int FROM (SELECT property_object_id FROM crm.bookings WHERE status IN ('Reserved', 'AwaitingPayment', 'Booked')
                 GROUP BY property_object_id HAVING count(*) > 1) x) AS "doubleActive",
               (SELECT count(*)::int FROM chessboard.property_objects WHERE NOT (
                  ((status = 'Reserved') = (reserved_until IS NOT NULL)) AND ((status = 'Booked') = (booked_until IS NOT NULL))
                  AND ((status IN ('Reserved', 'Booked')) = (hold_deal_id IS NOT NULL)))) AS chs002`;
      expect(r.doubleActive, `INV-BKG-001 violated ${where}`).toBe(0);
      expect(r.chs002, `INV-CHS-002 violated ${where}`).toBe(0);
    };

    for (const a of actions) {
      step++;
      stats.steps++;
      // time passes between two things that happen (no two crm transitions share a millisecond)
      clock = new Date(clock.getTime() + 1000);
      switch (a.k) {
        case 'create': {
          // a sold object is no longer offered for booking (crm trusts the id; the storefront does not offer it)
          const [sold] = await sql`SELECT 1 FROM crm.bookings WHERE property_object_id = ${objectIds[a.object]!} AND status = 'Completed'`;
          if (sold) break;
          await command(async (ctx) => {
            const b = await db.transaction((tx) => createBookingCommand(tx, { dealId: dealIds[a.deal]!, propertyObjectId: objectIds[a.object]!, programId: a.paid ? paidProgram : freeProgram, requisites: a.paid ? { setId: requisiteSet.id, version: requisiteSet.version } : undefined }, ctx));
            bookingIds.push(b.id);
          });
          break;
        }
        case 'confirm': {
          const id = bookingAt(a.booking);
          if (id) await command((ctx) => db.transaction((tx) => confirmBookingCommand(tx, { bookingId: id }, ctx)));
          break;
        }
        case 'paidStep': {
          const id = bookingAt(a.booking);
          if (!id) break;
          const [b] = await sql<{ status: string; payment_status: string }[]>`SELECT status, payment_status FROM crm.bookings WHERE id = ${id}`;
          if (b?.status === 'Reserved' && b.payment_status === 'Pending') {
            await command((ctx) => db.transaction((tx) => uploadContractCommand(tx, { bookingId: id, document: 'contract.pdf' }, ctx)));
          } else if (b?.status === 'AwaitingPayment' && b.payment_status === 'ContractUploaded') {
            await command((ctx) => db.transaction((tx) => uploadReceiptCommand(tx, { bookingId: id, document: 'receipt.pdf' }, ctx)));
          } else {
            await command((ctx) => db.transaction((tx) => confirmPaymentCommand(tx, { bookingId: id }, ctx)));
          }
          break;
        }
        case 'extend': {
          const id = bookingAt(a.booking);
          if (id) await command((ctx) => db.transaction((tx) => extendBookingCommand(tx, { bookingId: id, idempotencyKey: randomUUID() }, ctx)));
          break;
        }
        case 'cancel': {
          const id = bookingAt(a.booking);
          if (id) await command((ctx) => db.transaction((tx) => cancelBookingCommand(tx, { bookingId: id, reason: 'client changed mind' }, ctx)));
          break;
        }
        case 'startSale': {
          const id = bookingAt(a.booking);
          if (id) await command((ctx) => db.transaction((tx) => startSaleCommand(tx, { bookingId: id }, ctx)));
          break;
        }
        case 'cancelDeal':
          await command((ctx) => db.transaction((tx) => cancelDealCommand(tx, { dealId: dealIds[a.deal]!, reason: 'deal dropped' }, ctx)));
          break;
        case 'advance':
          clock = new Date(clock.getTime() + a.minutes * 60_000);
          break;
        case 'expire': {
          const at = clock;
          await createBookingExpirationJob({ now: () => at }).run(jobContext());
          break;
        }
        case 'safetyNet': {
          const at = clock;
          const ctx = jobContext();
          await createPropertyObjectHoldExpirationJob({ now: () => at }).run(ctx);
          const released = await sql<{ property_object_id: string }[]>`SELECT property_object_id FROM chessboard.hold_releases WHERE run_id = ${ctx.runId}`;
          for (const r of released) safetyNet.push({ objectId: r.property_object_id, step });
          stats.safetyNetReleases += released.length;
          break;
        }
        case 'deliver': {
          const events = await producedEvents();
          if (events.length === 0) break;
          await deliver(events[a.pick % events.length]!, bypassEvery > 0 && a.pick % bypassEvery === 0);
          break;
        }
      }
      await checkStepInvariants(`after step ${step} (${a.k})`);
    }

    // ---- the end of the run: crm's timers run out, every event arrives (in a chosen order), the DLQ is requeued once
    step++;
    {
      const at = clock;
      await createBookingExpirationJob({ now: () => at }).run(jobContext());
    }
    const delivered = new Set(deliveries.map((d) => d.messageId));
    for (const row of seededShuffle((await producedEvents()).filter((r) => !delivered.has(r.message_id)), finalSeed)) await deliver(row, false);
    step++;
    const rejected = await sql<{ message_id: string }[]>`SELECT message_id::text FROM chessboard.inbox WHERE consumer = ${CONSUMER} AND result = 'rejected'`;
    const rejectedIds = new Set(rejected.map((r) => r.message_id));
    stats.mismatches += (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chessboard.hold_mismatches`)[0]!.n;
    for (const row of seededShuffle((await producedEvents()).filter((r) => rejectedIds.has(r.message_id)), finalSeed ^ 0x5bd1e995)) {
      // ops requeue (runbook): the inbox row of the rejected message is removed, the message is consumed again
      await sql`DELETE FROM chessboard.inbox WHERE consumer = ${CONSUMER} AND message_id = ${row.message_id}`;
      stats.requeued++;
      await deliver(row, false);
    }
    await checkStepInvariants('at the end of the run');

    // ---- INV-CHS-002 on every state an object passed through (each status-changed event carries the full state)
    const changes = await sql<{ payload: { payload: { toStatus: string; reservedUntil: string | null; bookedUntil: string | null; holdDealId: string | null } } }[]>`
      SELECT payload FROM chessboard.outbox WHERE topic = ${TOPICS.propertyObjectStatusChanged} ORDER BY id`;
    for (const { payload: { payload: p } } of changes) {
      const held = p.toStatus === 'Reserved' || p.toStatus === 'Booked';
      expect((p.toStatus === 'Reserved') === (p.reservedUntil !== null) && (p.toStatus === 'Booked') === (p.bookedUntil !== null) && held === (p.holdDealId !== null),
        `INV-CHS-002 violated by a status-changed event: ${JSON.stringify(p)}`).toBe(true);
    }

    // ---- INV-CHS-003: every Crm transition out of a hold was made by the holding deal
    const history = await sql<{ property_object_id: string; from_status: string; to_status: string; status_source: string; deal_id: string | null; booking_id: string | null; version: number }[]>`
      SELECT property_object_id::text, from_status, to_status, status_source, deal_id::text, booking_id::text, version
        FROM chessboard.property_object_status_history ORDER BY property_object_id, version`;
    const holder = new Map<string, { dealId: string | null; bookingId: string | null }>();
    for (const h of history) {
      const wasHeld = h.from_status === 'Reserved' || h.from_status === 'Booked';
      if (wasHeld && h.status_source === 'Crm') {
        expect(h.deal_id, `INV-CHS-003: ${h.from_status} → ${h.to_status} of object ${h.property_object_id} by another deal`).toBe(holder.get(h.property_object_id)?.dealId);
      }
      const nowHeld = h.to_status === 'Reserved' || h.to_status === 'Booked';
      holder.set(h.property_object_id, nowHeld ? { dealId: h.deal_id, bookingId: h.booking_id } : { dealId: null, bookingId: null });
    }
    const objects = await sql<{ id: string; status: string; hold_deal_id: string | null; hold_booking_id: string | null; reserved_until: string | null; booked_until: string | null }[]>`
      SELECT id::text, status, hold_deal_id::text, hold_booking_id::text, reserved_until, booked_until FROM chessboard.property_objects`;
    const bookings = await sql<{ id: string; deal_id: string; property_object_id: string; status: string; reserve_expires_at: string; booking_expires_at: string | null; created_at: string }[]>`
      SELECT id::text, deal_id::text, property_object_id::text, status, reserve_expires_at, booking_expires_at, created_at FROM crm.bookings ORDER BY created_at, id`;
    for (const o of objects) {
      if (o.hold_booking_id) {
        const b = bookings.find((x) => x.id === o.hold_booking_id);
        expect(b && b.deal_id === o.hold_deal_id && b.property_object_id === o.id, `INV-CHS-003: object ${o.id} held by booking ${o.hold_booking_id} of deal ${o.hold_deal_id}, which is not that deal's booking of this object`).toBe(true);
      }
    }

    // ---- the status the last winning booking event implies (or a later safety-net release)
    const implied: Record<string, string> = {
      [TOPICS.bookingCreated]: 'Reserved', [TOPICS.bookingConfirmed]: 'Booked', [TOPICS.bookingExtended]: 'Booked',
      [TOPICS.bookingExpired]: 'Free', [TOPICS.bookingCancelled]: 'Free', [TOPICS.dealCancelled]: 'Free', [TOPICS.dealSaleStarted]: 'Sold',
    };
    for (const o of objects) {
      const wins = deliveries.filter((d) => d.objectId === o.id && d.outcome === 'applied');
      const lastWin = wins[wins.length - 1];
      const lastNet = safetyNet.filter((s) => s.objectId === o.id).pop();
      const expected = lastNet && (!lastWin || lastNet.step >= lastWin.step) ? 'Free' : lastWin ? implied[lastWin.topic]! : 'Free';
      expect(o.status, `object ${o.id}: the last winning event ${lastWin?.topic ?? '(none)'} (step ${lastWin?.step}) / safety net (step ${lastNet?.step}) imply ${expected}`).toBe(expected);
    }

    // ---- converged with crm once every event was delivered and the DLQ requeued
    for (const o of objects) {
      const own = bookings.filter((b) => b.property_object_id === o.id);
      const active = own.find((b) => ACTIVE.includes(b.status));
      const sold = own.some((b) => b.status === 'Completed');
      const expected = sold ? { status: 'Sold', deal: null, booking: null }
        : active ? { status: active.status === 'Booked' ? 'Booked' : 'Reserved', deal: active.deal_id, booking: active.id }
          : { status: 'Free', deal: null, booking: null };
      const why = `object ${o.id} vs crm bookings ${JSON.stringify(own.map((b) => ({ id: b.id.slice(0, 8), deal: b.deal_id.slice(0, 8), status: b.status })))}; deliveries ${JSON.stringify(deliveries.filter((d) => d.objectId === o.id).map((d) => `${d.step}:${d.topic.split('.')[2]}:${d.bookingId?.slice(0, 8)}:${d.outcome}${d.code ? `/${d.code}` : ''}`))}`;
      expect({ status: o.status, deal: o.hold_deal_id, booking: o.hold_booking_id }, why).toEqual(expected);
      if (active && expected.status === 'Reserved') expect(new Date(o.reserved_until!).getTime(), why).toBe(new Date(active.reserve_expires_at).getTime());
      if (active && expected.status === 'Booked') expect(new Date(o.booked_until!).getTime(), why).toBe(new Date(active.booking_expires_at!).getTime());
    }
  };

  const t0 = Date.now();
  let failure: unknown;
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(actionArb, { minLength: 8, maxLength: opts.maxActions, size: 'max' }),
        fc.integer(),
        fc.constantFrom(0, 0, 3, 5),
        async (actions, finalSeed, bypassEvery) => { await run(actions, finalSeed, bypassEvery); },
      ),
      { numRuns: opts.numRuns, seed: opts.seed, endOnFailure: false, interruptAfterTimeLimit: 30 * 60_000 },
    );
  } catch (e) {
    failure = e;
  }
  const seconds = secondsSince(t0);
  figure('interleavings', `${opts.label}: ${stats.runs} runs (seed ${opts.seed}, FAULTS_SEED=${opts.seed} replays), ${stats.steps} steps, `
    + `${stats.commandsOk} commands applied / ${stats.commandsRefused} refused, deliveries ${JSON.stringify(stats.deliveries)}, ${JSON.stringify(stats.details)}, `
    + `${stats.duplicatesDelivered} redeliveries (${stats.bypassedInbox} past the inbox), ${stats.safetyNetReleases} safety-net releases, `
    + `${stats.mismatches} INV-CHS-003 refusals (DLQ, ${stats.requeued} requeued), violations: ${failure ? 'FOUND' : 0} (${seconds} s)`,
  { ...stats, seed: opts.seed, seconds, failed: !!failure });
  if (failure) throw failure;
  return stats;
}
