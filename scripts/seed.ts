import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { contracts, eventTypes, type Topic } from '../server/contracts';
import { hashPassword } from '../server/auth/session';
import type { MessengerTopic } from '../server/messenger/card';
import { dealChatConsumer } from '../server/messenger/deal-chat.consumer';
import { createDatabase } from '../server/platform/db';
import { replayThroughConsumer } from '../server/platform/kafka/replay';
import { createLogger } from '../server/platform/logger';
import { seedEnv, seedNotifications, seedRewards } from './seed-notifications';
import { BUILDINGS, DEMO_PASSWORD, PROJECTS, TENANTS, USERS, idFor, prng } from './seed-data';

/**
 * `npm run db:seed`: demo data, deterministic (fixed PRNG seed, ids derived from names) and idempotent
 * (every insert is ON CONFLICT DO NOTHING; a second run changes nothing). Timers are relative to the
 * moment of the first run. Chessboard publishes project/object upserted events for what it inserts
 * (the catalog projection consumes them); catalog cards are also written directly so that Delisted
 * cards older than the 30-day retention exist from the start.
 */
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

type Row = Record<string, unknown>;

export async function seed(url: string, log: (l: string) => void = console.log): Promise<{ objects: number; bookings: number; inserted: boolean }> {
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  try {
    const already = await sql`SELECT 1 FROM auth.tenants WHERE id = ${TENANTS[0].id}`;
    if (already.length > 0) {
      log('[seed] demo data already present; nothing to do');
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM chessboard.property_objects`;
      const [{ b }] = await sql`SELECT count(*)::int AS b FROM crm.bookings`;
      return { objects: n, bookings: b, inserted: false };
    }
    const now = Date.now();
    const at = (offsetMs: number) => new Date(now + offsetMs);
    const rnd = prng(20261129);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
    const correlationId = randomUUID();
    const outbox: Row[] = [];
    const event = (topic: Topic, aggregateType: string, aggregateId: string, tenantId: string, payload: unknown) => {
      const messageId = randomUUID();
      const envelope = contracts[topic].parse({
        messageId, type: eventTypes[topic], contractVersion: 1, aggregateType, aggregateId,
        occurredAt: new Date(now).toISOString(), tenantId, correlationId, causationId: null, payload,
      });
      outbox.push({ message_id: messageId, topic, key: aggregateId, aggregate_type: aggregateType, aggregate_id: aggregateId, payload: envelope, headers: { correlationId } });
    };
    const tenantId = (key: string) => TENANTS.find((t) => t.key === key)!.id;
    // the crm events the seeded bookings went through (not published: the seed writes their end state);
    // the deal chats are made from them by the messenger consumer's handler (replayThroughConsumer below)
    const crmEvents: { topic: MessengerTopic; envelope: unknown }[] = [];
    const crmEvent = (topic: MessengerTopic, aggregateId: string, tenant: string, occurredAt: Date, payload: Row) => {
      crmEvents.push({ topic, envelope: contracts[topic].parse({
        messageId: randomUUID(), type: eventTypes[topic], contractVersion: 1, aggregateType: topic.includes('.deal-') ? 'Deal' : 'Booking', aggregateId,
        occurredAt: occurredAt.toISOString(), tenantId: tenant, correlationId, causationId: null, payload,
      }) });
    };

    // --- auth -------------------------------------------------------------------------------
    const hash = await hashPassword(DEMO_PASSWORD);
    const users = USERS.map((u) => ({ id: idFor(`user:${u.email}`), email: u.email, display_name: u.name, password_hash: hash, role: u.role, tenant_id: u.tenant ? tenantId(u.tenant) : null }));
    const userId = (email: string) => idFor(`user:${email}`);

    // --- chessboard -------------------------------------------------------------------------
    const projects: Row[] = PROJECTS.map((p) => ({ id: idFor(`project:${p.key}`), tenant_id: tenantId(p.tenant), name: p.name, city: p.city }));
    const buildings: Row[] = [];
    const objects: (Row & { id: string; key: string; tenant: string })[] = [];
    for (const b of BUILDINGS) {
      const project = PROJECTS.find((p) => p.key === b.project)!;
      const bId = idFor(`building:${b.key}`);
      buildings.push({ id: bId, tenant_id: tenantId(project.tenant), project_id: idFor(`project:${project.key}`), name: b.name, sections: b.sections, floors: b.floors });
      for (let section = 1; section <= b.sections; section++) {
        for (let floor = 1; floor <= b.floors; floor++) {
          for (let i = 1; i <= b.perSection; i++) {
            const rooms = i === 1 ? 0 : i === 2 ? 1 : i === 3 ? 2 : pick([2, 3, 3, 4]);
            const area = Math.round((rooms === 0 ? 22 + rnd() * 8 : 30 + rooms * 17 + rnd() * 12) * 10) / 10;
            const pricePerM2 = (project.city === 'Москва' ? 310_000 : 210_000) * (1 + floor * 0.006) * (0.95 + rnd() * 0.1);
            const price = Math.round((area * pricePerM2) / 10_000) * 10_000;
            const number = `${section}${String(floor).padStart(2, '0')}${i}`;
            const r = rnd();
            const status = r < 0.12 ? 'Sold' : r < 0.14 ? 'Hidden' : 'Free';
            objects.push({
              key: `${b.key}-${number}`,
              id: idFor(`object:${b.key}:${number}`),
              tenant: project.tenant,
              tenant_id: tenantId(project.tenant),
              project_id: idFor(`project:${project.key}`),
              building_id: bId,
              section, floor, number, rooms, area, price,
              status,
              reserved_until: null, booked_until: null, hold_deal_id: null, hold_booking_id: null,
              sold_at: status === 'Sold' ? at(-Math.floor(rnd() * 300) * DAY - DAY) : null,
              status_source: 'Import',
              status_changed_at: at(-40 * DAY), updated_at: at(-40 * DAY), version: 1,
            });
          }
        }
      }
    }

    // --- crm --------------------------------------------------------------------------------
    const programs: Row[] = [];
    for (const t of TENANTS) {
      // the agent's reward per programme (set by the developer manager): a fixed sum for a free reserve, a share of the price for a paid one
      programs.push({ id: idFor(`program:${t.key}:free`), tenant_id: t.id, name: 'Бесплатная бронь', is_paid: false, reserve_duration_minutes: 60, booking_duration_hours: 48, reward_kind: 'fixed', reward_value: 50_000 });
      programs.push({ id: idFor(`program:${t.key}:paid`), tenant_id: t.id, name: 'Платная бронь', is_paid: true, reserve_duration_minutes: 24 * 60, booking_duration_hours: 72, reward_kind: 'percent', reward_value: 1.5 });
    }
    const deals: Row[] = [];
    const bookings: Row[] = [];
    const timeline: Row[] = [];
    const history: Row[] = [];
    let dealNo = 0;
    const investorId = userId('investor@pin.local');
    const newDeal = (t: string, status: string, agentEmail: string | null, investor: string | null = null) => {
      dealNo++;
      const id = idFor(`deal:${t}:${dealNo}`);
      deals.push({ id, tenant_id: tenantId(t), title: `Сделка №${1000 + dealNo}`, agent_id: agentEmail ? userId(agentEmail) : null, investor_id: investor, status, version: 1, created_at: at(-5 * DAY), updated_at: at(-DAY) });
      return id;
    };
    /** the investor's deals with each developer: a reserve, the paid booking and two open applications */
    const INVESTOR_SCENARIOS = new Set(['reserved, free program', 'booked, paid']);
    const rewardOf = (program: 'free' | 'paid', price: number) =>
      (program === 'paid' ? { kind: 'percent' as const, value: 1.5, price, amount: Math.round(price * 1.5) / 100 } : { kind: 'fixed' as const, value: 50_000, price, amount: 50_000 });
    /** booking id → what booking-paid and booking-created said beyond the booking row (the deal's agent and investor, the reward) */
    const eventExtras = new Map<string, { agentId: string; investorId: string | null; reward: ReturnType<typeof rewardOf> }>();
    // free cells of a building, in grid order (low floors first), for the booking scenarios
    const freeCells = (bKey: string) => objects.filter((o) => o.key.startsWith(`${bKey}-`) && o.status === 'Free');

    type Scenario = {
      status: string; program: 'free' | 'paid'; payment: string; dealStatus: string;
      reserveExpires: number; booked?: number; bookingExpires?: number;
      object: { status: string; reservedUntil?: number; bookedUntil?: number; soldAt?: number } ;
      note: string;
    };
    const S = (s: Scenario) => s;
    const scenarios: Scenario[] = [
      S({ note: 'reserved, free program', status: 'Reserved', program: 'free', payment: 'NotRequired', dealStatus: 'Booking', reserveExpires: 40 * MIN, object: { status: 'Reserved', reservedUntil: 40 * MIN } }),
      S({ note: 'reserved, free program', status: 'Reserved', program: 'free', payment: 'NotRequired', dealStatus: 'Booking', reserveExpires: 55 * MIN, object: { status: 'Reserved', reservedUntil: 55 * MIN } }),
      S({ note: 'paid, receipt uploaded, awaiting payment confirmation', status: 'AwaitingPayment', program: 'paid', payment: 'ReceiptUploaded', dealStatus: 'Booking', reserveExpires: 20 * HOUR, object: { status: 'Reserved', reservedUntil: 20 * HOUR } }),
      S({ note: 'paid, receipt uploaded, awaiting payment confirmation', status: 'AwaitingPayment', program: 'paid', payment: 'ReceiptUploaded', dealStatus: 'Booking', reserveExpires: 22 * HOUR, object: { status: 'Reserved', reservedUntil: 22 * HOUR } }),
      S({ note: 'paid, contract uploaded, no receipt yet', status: 'AwaitingPayment', program: 'paid', payment: 'ContractUploaded', dealStatus: 'Booking', reserveExpires: 18 * HOUR, object: { status: 'Reserved', reservedUntil: 18 * HOUR } }),
      S({ note: 'paid, reserved, contract pending', status: 'Reserved', program: 'paid', payment: 'Pending', dealStatus: 'Booking', reserveExpires: 23 * HOUR, object: { status: 'Reserved', reservedUntil: 23 * HOUR } }),
      S({ note: 'booked', status: 'Booked', program: 'free', payment: 'NotRequired', dealStatus: 'Booking', reserveExpires: -2 * HOUR, booked: -2.5 * HOUR, bookingExpires: 30 * HOUR, object: { status: 'Booked', bookedUntil: 30 * HOUR } }),
      S({ note: 'booked, lapses soon (extend warning)', status: 'Booked', program: 'free', payment: 'NotRequired', dealStatus: 'Booking', reserveExpires: -46 * HOUR, booked: -46.5 * HOUR, bookingExpires: 90 * MIN, object: { status: 'Booked', bookedUntil: 90 * MIN } }),
      S({ note: 'booked, paid', status: 'Booked', program: 'paid', payment: 'Paid', dealStatus: 'Booking', reserveExpires: -DAY, booked: -DAY, bookingExpires: 47 * HOUR, object: { status: 'Booked', bookedUntil: 47 * HOUR } }),
      S({ note: 'completed (sale started)', status: 'Completed', program: 'free', payment: 'NotRequired', dealStatus: 'Sale', reserveExpires: -10 * DAY, booked: -10 * DAY, bookingExpires: -8 * DAY, object: { status: 'Sold', soldAt: -9 * DAY } }),
      S({ note: 'reserve expired (released)', status: 'ReserveExpired', program: 'free', payment: 'NotRequired', dealStatus: 'Application', reserveExpires: -3 * DAY, object: { status: 'Free' } }),
      S({ note: 'booking expired (released)', status: 'BookingExpired', program: 'free', payment: 'NotRequired', dealStatus: 'Application', reserveExpires: -6 * DAY, booked: -6 * DAY, bookingExpires: -4 * DAY, object: { status: 'Free' } }),
      S({ note: 'cancelled (released)', status: 'Cancelled', program: 'free', payment: 'NotRequired', dealStatus: 'Application', reserveExpires: -2 * DAY, object: { status: 'Free' } }),
      // lost releases: crm already expired the booking but chessboard still holds the object
      S({ note: 'STUCK: reserve expired in crm, object still Reserved past grace', status: 'ReserveExpired', program: 'free', payment: 'NotRequired', dealStatus: 'Application', reserveExpires: -35 * MIN, object: { status: 'Reserved', reservedUntil: -35 * MIN } }),
      S({ note: 'STUCK: booking expired in crm, object still Booked past grace', status: 'BookingExpired', program: 'free', payment: 'NotRequired', dealStatus: 'Application', reserveExpires: -3 * DAY, booked: -3 * DAY, bookingExpires: -2 * HOUR, object: { status: 'Booked', bookedUntil: -2 * HOUR } }),
      S({ note: 'in grace: reserve expired 4 min ago, release still expected', status: 'ReserveExpired', program: 'free', payment: 'NotRequired', dealStatus: 'Application', reserveExpires: -4 * MIN, object: { status: 'Reserved', reservedUntil: -4 * MIN } }),
    ];
    const plan: { tenant: 'A' | 'B'; building: string; agent: string; scenarios: Scenario[] }[] = [
      { tenant: 'A', building: 'B1', agent: 'agent@pin.local', scenarios },
      { tenant: 'B', building: 'B4', agent: 'agent-b@pin.local', scenarios: scenarios.filter((_, i) => i % 2 === 0 || scenarios[i].note.startsWith('STUCK')) },
    ];
    for (const p of plan) {
      const cells = freeCells(p.building);
      p.scenarios.forEach((s, i) => {
        const obj = cells[i * 3 + 1]; // spread over the first floors of the building
        const investor = INVESTOR_SCENARIOS.has(s.note) && !p.scenarios.slice(0, i).some((x) => x.note === s.note) ? investorId : null;
        const dealId = newDeal(p.tenant, s.dealStatus, p.agent, investor);
        eventExtras.set(idFor(`booking:${p.tenant}:${i}`), { agentId: userId(p.agent), investorId: investor, reward: rewardOf(s.program, obj.price as number) });
        const bookingId = idFor(`booking:${p.tenant}:${i}`);
        const createdAt = at(s.reserveExpires - (s.program === 'paid' ? 24 * HOUR : 60 * MIN));
        const terminal = !['Reserved', 'AwaitingPayment', 'Booked'].includes(s.status);
        const closedAt = s.status === 'ReserveExpired' ? at(s.reserveExpires + 30_000) : s.status === 'BookingExpired' ? at(s.bookingExpires! + 30_000) : s.status === 'Cancelled' ? at(s.reserveExpires - 30 * MIN) : s.status === 'Completed' ? at(-9 * DAY) : null;
        const version = { Reserved: 1, AwaitingPayment: s.payment === 'ReceiptUploaded' ? 3 : 2, Booked: s.payment === 'Paid' ? 4 : 2, Completed: 3, ReserveExpired: 2, BookingExpired: 3, Cancelled: 2 }[s.status]!;
        bookings.push({
          id: bookingId, tenant_id: tenantId(p.tenant), deal_id: dealId, property_object_id: obj.id,
          program_id: idFor(`program:${p.tenant}:${s.program}`), status: s.status,
          reserve_expires_at: at(s.reserveExpires), booking_expires_at: s.bookingExpires !== undefined ? at(s.bookingExpires) : null,
          booked_at: s.booked !== undefined ? at(s.booked) : null, payment_status: s.payment,
          contract_document: ['ContractUploaded', 'ReceiptUploaded', 'Paid'].includes(s.payment) ? 'contract-2026-0001.pdf' : null,
          receipt_document: ['ReceiptUploaded', 'Paid'].includes(s.payment) ? 'receipt-2026-0001.pdf' : null,
          created_by: userId(p.agent), closed_reason: s.status === 'Cancelled' ? 'Клиент передумал' : null, closed_at: closedAt,
          version, created_at: createdAt, updated_at: closedAt ?? at(-MIN),
        });
        {
          // the booking's saga events in order, for the deal chat
          const tid = tenantId(p.tenant);
          const base = { bookingId, dealId, propertyObjectId: obj.id, tenantId: tid };
          const iso = (d: Date) => d.toISOString();
          const bookedAt = s.booked !== undefined ? at(s.booked) : null;
          crmEvent('pin.crm.booking-created.v1', bookingId, tid, createdAt, {
            ...base, bookingVersion: 1, programId: idFor(`program:${p.tenant}:${s.program}`), status: 'Reserved',
            reserveExpiresAt: iso(at(s.reserveExpires)), createdAt: iso(createdAt), agentId: userId(p.agent), investorId: investor,
          });
          if (bookedAt && s.payment === 'Paid') {
            crmEvent('pin.crm.booking-paid.v1', bookingId, tid, bookedAt, { ...base, bookingVersion: version, paidAt: iso(bookedAt), agentId: userId(p.agent), reward: rewardOf(s.program, obj.price as number) });
          }
          if (bookedAt) crmEvent('pin.crm.booking-confirmed.v1', bookingId, tid, bookedAt, { ...base, bookingVersion: s.status === 'Booked' ? version : 2, status: 'Booked', bookedAt: iso(bookedAt), bookingExpiresAt: iso(at(s.bookingExpires!)) });
          if (s.status === 'ReserveExpired' || s.status === 'BookingExpired') {
            const phase = s.status === 'ReserveExpired' ? 'Reserve' : 'Booking';
            crmEvent('pin.crm.booking-expired.v1', bookingId, tid, closedAt!, { ...base, bookingVersion: version, phase, status: s.status, expiredAt: iso(closedAt!), deadline: iso(at(phase === 'Reserve' ? s.reserveExpires : s.bookingExpires!)) });
          }
          if (s.status === 'Cancelled') crmEvent('pin.crm.booking-cancelled.v1', bookingId, tid, closedAt!, { ...base, bookingVersion: version, fromStatus: 'Reserved', reason: 'Клиент передумал', cancelledAt: iso(closedAt!) });
          if (s.status === 'Completed') crmEvent('pin.crm.deal-sale-started.v1', dealId, tid, closedAt!, { dealId, tenantId: tid, bookingId, propertyObjectId: obj.id, bookingVersion: version, startedAt: iso(closedAt!) });
        }
        timeline.push({ booking_id: bookingId, tenant_id: tenantId(p.tenant), at: createdAt, actor_type: 'user', actor_id: userId(p.agent), action: 'create', from_status: null, to_status: 'Reserved', reason: null, booking_version: 1 });
        if (s.status !== 'Reserved') {
          timeline.push({ booking_id: bookingId, tenant_id: tenantId(p.tenant), at: closedAt ?? at(-MIN), actor_type: terminal && s.status.endsWith('Expired') ? 'system' : 'user', actor_id: terminal && s.status.endsWith('Expired') ? 'booking-expiration' : userId(p.agent), action: `seed:${s.status}`, from_status: 'Reserved', to_status: s.status, reason: s.note, booking_version: version });
        }
        obj.status = s.object.status;
        obj.reserved_until = s.object.reservedUntil !== undefined ? at(s.object.reservedUntil) : null;
        obj.booked_until = s.object.bookedUntil !== undefined ? at(s.object.bookedUntil) : null;
        obj.hold_deal_id = s.object.status === 'Reserved' || s.object.status === 'Booked' ? dealId : null;
        obj.hold_booking_id = obj.hold_deal_id ? bookingId : null;
        obj.sold_at = s.object.soldAt !== undefined ? at(s.object.soldAt) : null;
        obj.status_source = 'Crm';
        obj.status_changed_at = createdAt;
        obj.updated_at = createdAt;
        obj.version = 2;
        history.push({ property_object_id: obj.id, tenant_id: obj.tenant_id, from_status: 'Free', to_status: s.object.status, status_source: 'Crm', at: createdAt, booking_id: bookingId, deal_id: dealId, reason: 'seed', version: 2 });
      });
      for (let i = 0; i < 8; i++) newDeal(p.tenant, 'Application', p.agent, i < 2 ? investorId : null);
      for (let i = 0; i < 2; i++) newDeal(p.tenant, 'Draft', p.agent);
    }

    // --- catalog ----------------------------------------------------------------------------
    const projectCards: Row[] = projects.map((p) => ({ id: p.id, developer_id: p.tenant_id, name: p.name, city: p.city, status: 'Published', free_count: 0, source_version: 1, created_at: at(-60 * DAY), updated_at: at(-40 * DAY) }));
    const objectCards: Row[] = objects.map((o) => ({
      id: o.id, project_id: o.project_id, building_id: o.building_id, developer_id: o.tenant_id, number: o.number, floor: o.floor, rooms: o.rooms,
      area: o.area, price: o.price, sale_status: o.status, status: o.status === 'Hidden' ? 'Hidden' : 'Published', source_version: 1,
      created_at: at(-60 * DAY), updated_at: at(-40 * DAY),
    }));
    // a project deleted in chessboard 45 days ago: its card and all its object cards Delisted together (INV-5)
    const oldProjectId = idFor('project:OLD');
    const oldBuildingId = idFor('building:OLD');
    const delistedAt = at(-45 * DAY);
    projectCards.push({ id: oldProjectId, developer_id: tenantId('A'), name: 'ЖК «Старая гавань»', city: 'Санкт-Петербург', status: 'Delisted', free_count: 0, source_version: 3, created_at: at(-400 * DAY), updated_at: delistedAt });
    const delistedObjectIds: string[] = [];
    for (let i = 1; i <= 40; i++) {
      const id = idFor(`object:OLD:${i}`);
      delistedObjectIds.push(id);
      objectCards.push({ id, project_id: oldProjectId, building_id: oldBuildingId, developer_id: tenantId('A'), number: `1${String(i).padStart(3, '0')}`, floor: 1 + (i % 9), rooms: 1 + (i % 3), area: 40 + i, price: 8_000_000 + i * 100_000, sale_status: 'Free', status: 'Delisted', source_version: 2, created_at: at(-400 * DAY), updated_at: delistedAt });
    }
    // objects deleted from live projects: 25 past the 30-day retention, 10 recent (kept by the job)
    for (let i = 1; i <= 35; i++) {
      const id = idFor(`object:DELETED:${i}`);
      const old = i <= 25;
      if (old) delistedObjectIds.push(id);
      objectCards.push({ id, project_id: idFor('project:P1'), building_id: idFor('building:B1'), developer_id: tenantId('A'), number: `9${String(i).padStart(3, '0')}`, floor: 1, rooms: 1, area: 35, price: 7_500_000, sale_status: 'Free', status: 'Delisted', source_version: 2, created_at: at(-200 * DAY), updated_at: old ? at(-(31 + i) * DAY) : at(-(1 + (i % 5)) * DAY) });
    }
    const objectOverrides: Row[] = delistedObjectIds.slice(0, 30).map((id, i) => ({ id: idFor(`po-override:${i}`), property_object_id: id, title: null, badge: 'Скидка', deleted_at: i % 2 ? at(-50 * DAY) : null }));
    objects.slice(0, 20).forEach((o, i) => objectOverrides.push({ id: idFor(`po-override:live:${i}`), property_object_id: o.id, title: null, badge: 'Вид на реку', deleted_at: null }));
    const buildingOverrides: Row[] = [
      { id: idFor('b-override:OLD:1'), project_id: oldProjectId, building_id: oldBuildingId, display_name: 'Дом у залива', deleted_at: null },
      { id: idFor('b-override:OLD:2'), project_id: oldProjectId, building_id: oldBuildingId, display_name: 'Дом у залива (стар.)', deleted_at: at(-60 * DAY) },
      { id: idFor('b-override:B1'), project_id: idFor('project:P1'), building_id: idFor('building:B1'), display_name: 'Первая очередь', deleted_at: null },
    ];
    const rankingRules: Row[] = [
      { id: idFor('ranking:A'), developer_id: tenantId('A'), project_id: null, weight: 1.2 },
      { id: idFor('ranking:B'), developer_id: tenantId('B'), project_id: null, weight: 1.0 },
      { id: idFor('ranking:OLD'), developer_id: tenantId('A'), project_id: oldProjectId, weight: 0.8 },
    ];

    // --- chessboard events for the catalog projection --------------------------------------
    for (const p of projects) {
      const free = objects.filter((o) => o.project_id === p.id && o.status === 'Free').length;
      p.property_objects_free_count = free;
      p.property_objects_total_count = objects.filter((o) => o.project_id === p.id).length;
      p.property_objects_held_count = objects.filter((o) => o.project_id === p.id && (o.status === 'Reserved' || o.status === 'Booked')).length;
      p.property_objects_sold_count = objects.filter((o) => o.project_id === p.id && o.status === 'Sold').length;
      event('pin.chessboard.project-upserted.v1', 'Project', p.id as string, p.tenant_id as string, { projectId: p.id, tenantId: p.tenant_id, name: p.name, city: p.city, propertyObjectsFreeCount: free, version: 1, updatedAt: new Date(now).toISOString() });
    }
    for (const o of objects) {
      event('pin.chessboard.property-object-upserted.v1', 'PropertyObject', o.id, o.tenant_id as string, {
        propertyObjectId: o.id, tenantId: o.tenant_id, projectId: o.project_id, buildingId: o.building_id, number: o.number, floor: o.floor, section: o.section,
        rooms: o.rooms, area: o.area, price: o.price, status: o.status, version: o.version, updatedAt: (o.updated_at as Date).toISOString(),
      });
    }

    // --- crm's own view of the objects (DESIGN decision 8): what its projection consumer makes of the
    // upserted events above (their version, so the late events are stale no-ops); the deleted objects
    // of the Delisted cards as tombstones — crm answers NOT_FOUND for them
    const crmObjects: Row[] = objects.map((o) => ({
      id: o.id, tenant_id: o.tenant_id, project_id: o.project_id, status: o.status, deleted: false,
      source_version: o.version, source_changed_at: o.updated_at, deleted_at: null, price: o.price, floor: o.floor, rooms: o.rooms,
    }));
    for (const c of objectCards.filter((c) => c.status === 'Delisted')) {
      crmObjects.push({ id: c.id, tenant_id: c.developer_id, project_id: c.project_id, status: c.sale_status, deleted: true, source_version: c.source_version, source_changed_at: c.updated_at, deleted_at: c.updated_at, price: c.price, floor: c.floor, rooms: c.rooms });
    }

    const strip = (rows: Row[]) => rows.map(({ key: _k, tenant: _t, ...r }) => r);
    await sql.begin(async (tx) => {
      const ins = async (table: string, rows: Row[]) => {
        for (let i = 0; i < rows.length; i += 500) {
          const chunk = rows.slice(i, i + 500);
          await tx`INSERT INTO ${tx(table.split('.')[0])}.${tx(table.split('.')[1])} ${tx(chunk as never)} ON CONFLICT DO NOTHING`;
        }
      };
      await ins('auth.tenants', TENANTS.map((t) => ({ id: t.id, name: t.name })));
      await ins('auth.users', users);
      await ins('chessboard.projects', projects);
      await ins('chessboard.buildings', buildings);
      await ins('chessboard.property_objects', strip(objects));
      await ins('chessboard.property_object_status_history', history);
      await ins('crm.property_objects', crmObjects);
      await ins('crm.booking_programs', programs);
      await ins('crm.deals', deals);
      await ins('crm.bookings', bookings);
      await ins('crm.booking_timeline', timeline);
      // bookings created in the past: days the reports' rollup may already hold would miss them (the job rolls up again)
      await tx`DELETE FROM crm.booking_daily_rollup`;
      await tx`DELETE FROM crm.booking_rollup_days`;
      await ins('catalog.project_cards', projectCards);
      await ins('catalog.property_object_cards', objectCards);
      await ins('catalog.property_object_display_overrides', objectOverrides);
      await ins('catalog.building_display_overrides', buildingOverrides);
      await ins('catalog.developer_ranking_rules', rankingRules);
      await ins('chessboard.outbox', outbox);
      await tx`SELECT pg_notify('pin_outbox_chessboard', '')`;
    });
    // the deal chats: the messenger consumer's handler over the bookings' events (not written by hand)
    const database = createDatabase(url, { max: 2, applicationName: 'pin-seed' });
    try {
      const chats = await replayThroughConsumer(database, dealChatConsumer, crmEvents, { logger: createLogger('seed', { level: 'warn' }), env: seedEnv(url) });
      log(`[seed] deal chats: ${chats.applied} system cards from ${crmEvents.length} crm events`);
    } finally {
      await database.close();
    }
    // notifications of the demo deals: notifications' consumer run over the bookings' crm events
    const notified = await seedNotifications(url, bookings, eventExtras);
    log(`[seed] notifications: ${notified} crm events applied by ${'notifications.booking-events'}`);
    // the agents' rewards of the paid bookings: rewards' consumer run over the same events
    const rewarded = await seedRewards(url, bookings, eventExtras);
    log(`[seed] rewards: ${rewarded} crm events applied by ${'rewards.booking-events'}`);
    log(`[seed] ${TENANTS.length} tenants, ${projects.length} projects, ${buildings.length} buildings, ${objects.length} property objects, ${deals.length} deals, ${bookings.length} bookings, ${objectCards.length} object cards, ${outbox.length} chessboard events`);
    return { objects: objects.length, bookings: bookings.length, inserted: true };
  } finally {
    await sql.end({ timeout: 2 });
  }
}
