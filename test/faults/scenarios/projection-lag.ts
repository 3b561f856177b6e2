import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { SYSTEM_ACTOR, type Actor } from '../../../server/auth/actor';
import { eventually, readObject } from '../../fixtures/chessboard.fixtures';
import { crmPropertyObjectStatusConsumer } from '../../../server/chessboard/crm-property-object-status.consumer';
import {
  deletePropertyObject, setPropertyObjectHidden, upsertBuilding, upsertProject, upsertPropertyObject,
} from '../../../server/chessboard/commands';
import { confirmBookingCommand } from '../../../server/crm/commands/confirm-booking';
import { createBookingCommand } from '../../../server/crm/commands/create-booking';
import { startSaleCommand } from '../../../server/crm/commands/start-sale';
import { crmPropertyObjectProjectionConsumer } from '../../../server/crm/property-object-projection.consumer';
import { cancelBookingInRepair } from '../../../server/ops/booking-repairs';
import { runReconciliation } from '../../../server/ops/reconciliation';
import { isAppError } from '../../../server/platform/errors';
import { createIdempotentProducer, createKafka } from '../../../server/platform/kafka/client';
import { startConsumer, type RunningConsumer } from '../../../server/platform/kafka/consumer-runner';
import { fetchConsumerLag } from '../../../server/platform/kafka/lag';
import { TOPICS } from '../../../server/platform/kafka/topics';
import { createLogger } from '../../../server/platform/logger';
import { OutboxRelay } from '../../../server/platform/outbox/relay';
import type { TestContext } from '../../harness/harness';
import { figure, secondsSince } from '../helpers/figures';
import { commandContext } from '../../../server/platform/command-context';

/**
 * Projection lag (DESIGN decision 8, docs/decisions/0014-projection-lag.md): crm.property_objects behind the
 * chessboard. Everything runs through the real broker: chessboard's commands → chessboard outbox →
 * relay → Kafka → crm.property-object-projection; crm's commands → crm outbox → relay → Kafka →
 * chessboard.crm-property-object-status. With the projection consumer stopped, the chessboard hides,
 * deletes, sells (through a crm sale), shows and creates objects; CreateBooking answers from the stale
 * view. The behaviour under test:
 * - booked although chessboard no longer offers it (Hidden / deleted / Sold): chessboard refuses the
 *   booking-created (NOT_AVAILABLE / NOT_FOUND → DLQ), the object is untouched, and reconciliation lists
 *   the booking (booking_not_held, cause object_unavailable) with one repair — cancel booking — that
 *   makes the finding disappear on the next check (its booking-cancelled is a no-op in chessboard);
 * - refused although chessboard offers it (shown again / created): CRM_BOOKING_PROPERTY_OBJECT_HIDDEN /
 *   CRM_PROPERTY_OBJECT_NOT_FOUND, nothing written;
 * - once the projection caught up, crm answers what chessboard says: the stale bookings' objects are
 *   refused (HIDDEN / NOT_FOUND / SOLD), the shown and new objects are booked and chessboard holds them.
 */

interface Objects { hidden: string[]; deleted: string[]; sold: string[]; shown: string[]; created: string[] }
const pin: Actor = { userId: randomUUID(), role: 'pin_manager', tenantId: null };
const ops: Actor = { userId: randomUUID(), role: 'ops', tenantId: null };

export interface ProjectionLagStats {
  perKind: number; lagWhileStopped: number; acceptedStale: number; refusedStale: number; rejectedByChessboard: number;
  findings: number; repaired: number; bookedAfterCatchUp: number; refusedAfterCatchUp: number;
}

export async function projectionLagScenario(t: TestContext, opts: { perKind: number; label: string }): Promise<ProjectionLagStats> {
  const { db, sql } = t.database;
  const logger = createLogger('faults-projection-lag', { level: 'silent' });
  const tenantId = randomUUID();
  const projectId = randomUUID();
  const buildingId = randomUUID();
  const programId = randomUUID();
  const kafka = createKafka(t.env);
  const producer = createIdempotentProducer(kafka);
  const admin = kafka.admin();
  await Promise.all([producer.connect(), admin.connect()]);
  const chessboardRelay = new OutboxRelay('chessboard', { database: t.database, env: t.env, logger, producer });
  const crmRelay = new OutboxRelay('crm', { database: t.database, env: t.env, logger, producer });
  const deps = { database: t.database, env: t.env, logger, kafka };
  let projection: RunningConsumer | null = await startConsumer(crmPropertyObjectProjectionConsumer, deps);
  const chessboard = await startConsumer(crmPropertyObjectStatusConsumer, deps);
  const stats: ProjectionLagStats = {
    perKind: opts.perKind, lagWhileStopped: 0, acceptedStale: 0, refusedStale: 0, rejectedByChessboard: 0, findings: 0, repaired: 0, bookedAfterCatchUp: 0, refusedAfterCatchUp: 0,
  };
  const t0 = Date.now();
  try {
    const drain = async () => {
      for (const relay of [chessboardRelay, crmRelay]) expect((await relay.drain()).failed).toBe(0);
    };
    const viewOf = async (id: string) => (await sql<{ status: string; deleted: boolean }[]>`SELECT status, deleted FROM crm.property_objects WHERE id = ${id}`)[0];
    const inboxOf = (messageId: string) => sql<{ result: string; detail: string | null }[]>`
      SELECT result, detail FROM chessboard.inbox WHERE consumer = ${crmPropertyObjectStatusConsumer.name} AND message_id = ${messageId}`.then((r) => r[0]);
    const newDeal = async () => {
      const id = randomUUID();
      await sql`INSERT INTO crm.deals (id, tenant_id, title, status) VALUES (${id}, ${tenantId}, 'Deal', 'Application')`;
      return id;
    };
    let n = 0;
    const newObject = (status: 'Free' | 'Hidden' = 'Free') => {
      const id = randomUUID();
      n++;
      return db.transaction((tx) => upsertPropertyObject(tx, {
        id, tenantId, projectId, buildingId, section: 1, floor: 1 + (n % 20), number: String(1000 + n), rooms: 2, area: 50, price: 9_000_000, status,
      }, commandContext(SYSTEM_ACTOR))).then(() => id);
    };
    /** CreateBooking for a new deal: the booking, or the domain code of the refusal. */
    const bookFor = async (objectId: string) => {
      const dealId = await newDeal();
      try {
        return await db.transaction((tx) => createBookingCommand(tx, { dealId, propertyObjectId: objectId, programId }, commandContext(pin, randomUUID())));
      } catch (e) {
        if (!isAppError(e)) throw e;
        return e.code;
      }
    };

    // ---- the world, projected: every object known to crm as chessboard has it
    await db.transaction(async (tx) => {
      await upsertProject(tx, { id: projectId, tenantId, name: 'Lag', city: 'Москва' }, commandContext(SYSTEM_ACTOR));
      await upsertBuilding(tx, { id: buildingId, tenantId, projectId, name: 'B', sections: 2, floors: 20 }, commandContext(SYSTEM_ACTOR));
    });
    await sql`INSERT INTO crm.booking_programs (id, tenant_id, name, is_paid, reserve_duration_minutes, booking_duration_hours)
      VALUES (${programId}, ${tenantId}, 'Free', false, 60, 48)`;
    const o: Objects = { hidden: [], deleted: [], sold: [], shown: [], created: [] };
    for (let i = 0; i < opts.perKind; i++) {
      o.hidden.push(await newObject());
      o.deleted.push(await newObject());
      o.sold.push(await newObject());
      o.shown.push(await newObject('Hidden'));
    }
    await drain();
    const before = [...o.hidden, ...o.deleted, ...o.sold, ...o.shown];
    await eventually(async () => (await Promise.all(before.map(viewOf))).every((v) => v && !v.deleted), 60_000, 'crm view of every object');

    // ---- the projection stops; chessboard changes the objects
    await projection.stop();
    projection = null;
    for (let i = 0; i < opts.perKind; i++) {
      await db.transaction((tx) => setPropertyObjectHidden(tx, { propertyObjectId: o.hidden[i]!, hidden: true, reason: 'withdrawn' }, commandContext(ops)));
      await db.transaction((tx) => deletePropertyObject(tx, { propertyObjectId: o.deleted[i]! }, commandContext(SYSTEM_ACTOR)));
      await db.transaction((tx) => setPropertyObjectHidden(tx, { propertyObjectId: o.shown[i]!, hidden: false, reason: 'on sale again' }, commandContext(ops)));
      o.created.push(await newObject());
      // a sale through the saga: deal X books, confirms, starts the sale; chessboard marks the object Sold
      const dealX = await newDeal();
      const b = await db.transaction((tx) => createBookingCommand(tx, { dealId: dealX, propertyObjectId: o.sold[i]!, programId }, commandContext(pin, randomUUID())));
      await db.transaction((tx) => confirmBookingCommand(tx, { bookingId: b.id }, commandContext(pin, randomUUID())));
      await db.transaction((tx) => startSaleCommand(tx, { bookingId: b.id }, commandContext(pin, randomUUID())));
    }
    await drain();
    await eventually(async () => (await Promise.all(o.sold.map((id) => readObject(t.database, id)))).every((x) => x.status === 'Sold'), 60_000, 'the sales in chessboard');
    await drain(); // the Sold status-changed events, for the (stopped) projection
    const lag = await fetchConsumerLag(admin, t.env, [crmPropertyObjectProjectionConsumer]);
    stats.lagWhileStopped = lag.reduce((s, p) => s + p.lag, 0);
    expect(stats.lagWhileStopped, 'the projection is behind (ops page lag)').toBeGreaterThan(0);

    // ---- CreateBooking answers from the stale view
    const stale: { objectId: string; bookingId: string; kind: 'hidden' | 'deleted' | 'sold' }[] = [];
    for (const kind of ['hidden', 'deleted', 'sold'] as const) {
      for (const objectId of o[kind]) {
        const r = await bookFor(objectId);
        expect(typeof r, `${kind} object booked from the stale view`).toBe('object');
        stale.push({ objectId, bookingId: (r as { id: string }).id, kind });
        stats.acceptedStale++;
      }
    }
    const crmRowsBefore = (await sql<{ n: number }[]>`SELECT (SELECT count(*) FROM crm.bookings) + (SELECT count(*) FROM crm.outbox) AS n`)[0]!.n;
    for (const objectId of o.shown) expect(await bookFor(objectId)).toBe('CRM_BOOKING_PROPERTY_OBJECT_HIDDEN');
    for (const objectId of o.created) expect(await bookFor(objectId)).toBe('CRM_PROPERTY_OBJECT_NOT_FOUND');
    stats.refusedStale += o.shown.length + o.created.length;
    expect((await sql<{ n: number }[]>`SELECT (SELECT count(*) FROM crm.bookings) + (SELECT count(*) FROM crm.outbox) AS n`)[0]!.n, 'a refusal writes nothing').toBe(crmRowsBefore);

    // ---- chessboard refuses what it cannot hold (DLQ), the objects are untouched
    const chessboardBefore = new Map(await Promise.all([...o.hidden, ...o.sold].map(async (id) => [id, await readObject(t.database, id)] as const)));
    await drain();
    for (const s of stale) {
      const [created] = await sql<{ message_id: string }[]>`SELECT message_id::text FROM crm.outbox WHERE aggregate_id = ${s.bookingId} AND topic = ${TOPICS.bookingCreated}`;
      const r = await eventually(() => inboxOf(created!.message_id), 60_000, `chessboard's answer to the ${s.kind} object's booking`);
      expect(r, `${s.kind}`).toMatchObject({ result: 'rejected', detail: s.kind === 'deleted' ? 'CHESSBOARD_PROPERTY_OBJECT_NOT_FOUND' : 'CHESSBOARD_PROPERTY_OBJECT_NOT_AVAILABLE' });
      stats.rejectedByChessboard++;
    }
    for (const [id, row] of chessboardBefore) expect(await readObject(t.database, id)).toEqual(row);
    for (const id of o.deleted) expect(await sql`SELECT 1 FROM chessboard.property_objects WHERE id = ${id}`).toHaveLength(0);

    // ---- reconciliation lists each stale booking with the repair that works
    const check = () => runReconciliation(db, { now: new Date(), scope: tenantId, settleMs: 0 });
    const report = await check();
    for (const s of stale) {
      const finding = report.rows.find((r) => r.bookingId === s.bookingId);
      expect(finding, `reconciliation lists the ${s.kind} object's booking`).toMatchObject({ kind: 'booking_not_held', cause: 'object_unavailable', repairs: ['cancel_booking'] });
      stats.findings++;
    }

    // ---- the projection catches up: crm answers what chessboard says
    projection = await startConsumer(crmPropertyObjectProjectionConsumer, deps);
    await eventually(async () => {
      const views = await Promise.all([...o.hidden, ...o.deleted, ...o.sold, ...o.shown, ...o.created].map(viewOf));
      return views.every((v, i) => {
        const k = i / opts.perKind;
        if (k < 1) return v?.status === 'Hidden';
        if (k < 2) return v?.deleted;
        if (k < 3) return v?.status === 'Sold';
        return v?.status === 'Free' && !v.deleted;
      });
    }, 60_000, 'the projection caught up');
    for (const id of o.hidden) expect(await bookFor(id)).toBe('CRM_BOOKING_PROPERTY_OBJECT_HIDDEN');
    for (const id of o.deleted) expect(await bookFor(id)).toBe('CRM_PROPERTY_OBJECT_NOT_FOUND');
    for (const id of o.sold) expect(await bookFor(id)).toBe('CRM_BOOKING_PROPERTY_OBJECT_SOLD');
    stats.refusedAfterCatchUp += o.hidden.length + o.deleted.length + o.sold.length;
    const fresh: { objectId: string; bookingId: string; dealId: string }[] = [];
    for (const id of [...o.shown, ...o.created]) {
      const b = await bookFor(id);
      expect(typeof b, 'a shown / new object is bookable once crm sees it').toBe('object');
      fresh.push({ objectId: id, bookingId: (b as { id: string }).id, dealId: (b as { dealId: string }).dealId });
    }
    await drain();
    for (const f of fresh) {
      const held = await eventually(async () => {
        const x = await readObject(t.database, f.objectId);
        return x.status === 'Reserved' ? x : null;
      }, 60_000, 'chessboard holds the booked object');
      expect(held).toMatchObject({ hold_booking_id: f.bookingId, hold_deal_id: f.dealId });
      stats.bookedAfterCatchUp++;
    }

    // ---- the repair: cancel each stale booking; the finding disappears, chessboard is untouched
    for (const s of stale) {
      await db.transaction((tx) => cancelBookingInRepair(tx, { bookingId: s.bookingId, reason: 'object not available (crm view lagged)', actor: ops }));
    }
    await drain();
    for (const s of stale) {
      const [cancelled] = await sql<{ message_id: string }[]>`SELECT message_id::text FROM crm.outbox WHERE aggregate_id = ${s.bookingId} AND topic = ${TOPICS.bookingCancelled}`;
      const r = await eventually(() => inboxOf(cancelled!.message_id), 60_000, `chessboard's answer to the ${s.kind} object's cancel`);
      expect(r, `the cancel of the ${s.kind} object's booking`).toMatchObject({ result: 'no-op' });
    }
    const after = await check();
    for (const s of stale) expect(after.rows.find((r) => r.bookingId === s.bookingId), `${s.kind}: the finding is gone after the repair`).toBeUndefined();
    stats.repaired = stale.length;
    for (const [id, row] of chessboardBefore) expect(await readObject(t.database, id)).toEqual(row);
  } finally {
    await projection?.stop();
    await chessboard.stop();
    await chessboardRelay.release();
    await crmRelay.release();
    await Promise.all([producer.disconnect(), admin.disconnect()]);
  }
  const seconds = secondsSince(t0);
  figure('projection-lag', `${opts.label}: ${opts.perKind} object(s) per change; projection stopped (lag ${stats.lagWhileStopped} messages): `
    + `${stats.acceptedStale} booked from the stale view (hidden / deleted / sold), ${stats.rejectedByChessboard} refused by chessboard (DLQ), `
    + `${stats.findings} reconciliation findings, ${stats.repaired} repaired by cancelling (gone on the next check); ${stats.refusedStale} refused from the stale view (shown / new); `
    + `after catch-up ${stats.refusedAfterCatchUp} refused, ${stats.bookedAfterCatchUp} booked and held (${seconds} s)`, { ...stats, seconds });
  return stats;
}
