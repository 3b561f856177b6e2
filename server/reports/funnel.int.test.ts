import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../auth/actor';
import { insertTenant, insertUser } from '../../test/fixtures/auth.fixtures';
import { cancelBookingCommand } from '../crm/commands/cancel-booking';
import { confirmBookingCommand } from '../crm/commands/confirm-booking';
import { confirmPaymentCommand } from '../crm/commands/confirm-payment';
import { createBookingCommand } from '../crm/commands/create-booking';
import { startSaleCommand } from '../crm/commands/start-sale';
import { uploadContractCommand } from '../crm/commands/upload-contract';
import { uploadReceiptCommand } from '../crm/commands/upload-receipt';
import { actor, callerFor, expectTrpcError, httpCall, insertDeal, insertProgram } from '../../test/fixtures/crm.fixtures';
import { seedRequisiteSet } from '../../test/fixtures/profile.fixtures';
import { projectObjects } from '../../test/harness/crm-projection';
import { createTestContext, type TestContext } from '../../test/harness/harness';
import type { JobContext } from '../platform/jobs/types';
import type { Env } from '../main/env';
import { createKafka } from '../platform/kafka/client';
import { createReportsDailyRollupJob } from '../crm/reports-daily-rollup.job';
import { cohortSql, funnelReport, funnelSources } from './funnel';
import { commandContext } from '../platform/command-context';

/**
 * reports.funnel against the truth: a year of bookings driven through crm's real commands (expiry as the
 * worker leaves it), each with a known fate, and the expected figures of a period computed here from
 * that list — not from SQL. Plus tenant scope, roles, input limits and the plan of the cohort read.
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const T0 = new Date('2031-01-01T09:00:00.000Z');

type Fate =
  | 'active' | 'cancelR' | 'expireR' | 'booked' | 'cancelB' | 'expireB' | 'sold' // free program
  | 'contract' | 'expireC' | 'cancelC' | 'paidBooked' | 'paidSold'; // paid program
const FREE: Fate[] = ['active', 'cancelR', 'expireR', 'booked', 'cancelB', 'expireB', 'sold'];
const PAID: Fate[] = ['contract', 'expireC', 'cancelC', 'paidBooked', 'paidSold'];
const REASONS = ['Клиент передумал', 'Нашёл другой объект', '=HYPERLINK("x")'];

interface Seeded {
  tenantId: string;
  projectId: string;
  agentId: string | null;
  fate: Fate;
  createdAt: Date;
  /** minutes from creation to the developer's step (confirm or contract), to the payment, to the sale */
  confirmAfter: number;
  payAfter: number;
  sellAfter: number;
  reason: string | null;
  /** the object's floor and room count in crm's projection (null: not known there) */
  floor: number | null;
  rooms: number | null;
}

let t: TestContext;
const seeded: Seeded[] = [];
const TENANT = { id: '', projects: [randomUUID(), randomUUID()] as string[], agents: [] as string[] };
const OTHER = { id: '', projects: [randomUUID()] as string[], agents: [] as string[] };
let manager: Actor;
let otherManager: Actor;
let pin: Actor;

/** a small deterministic generator: the same world on every run */
function prng(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

async function seedBooking(s: Seeded, programs: { free: string; paid: string }, requisites: { setId: string; version: number }) {
  const db = t.database.db;
  const at = (minutes: number) => new Date(s.createdAt.getTime() + minutes * MIN);
  const ctx = (minutes: number) => commandContext(pin, randomUUID(), at(minutes));
  const objectId = randomUUID();
  await projectObjects(t.database, [{ id: objectId, tenantId: s.tenantId, projectId: s.projectId }]);
  await t.database.sql`UPDATE crm.property_objects SET floor = ${s.floor}, rooms = ${s.rooms} WHERE id = ${objectId}`;
  const deal = await insertDeal(t, s.tenantId, 'Application', s.agentId);
  const paid = PAID.includes(s.fate);
  const booking = await db.transaction((tx) =>
    createBookingCommand(tx, { dealId: deal.id, propertyObjectId: objectId, programId: paid ? programs.paid : programs.free }, ctx(0)));
  const bookingId = booking.id;
  const run = <I>(command: (tx: Parameters<Parameters<typeof db.transaction>[0]>[0], input: I, c: ReturnType<typeof ctx>) => Promise<unknown>, input: I, minutes: number) =>
    db.transaction((tx) => command(tx, input, ctx(minutes)));
  // the worker's expiry, as it leaves the row (status, closed_at, closed_reason, a timeline row)
  const expire = async (status: 'ReserveExpired' | 'BookingExpired', minutes: number) => {
    await t.database.sql`UPDATE crm.bookings SET status = ${status}, closed_at = ${at(minutes).toISOString()}::timestamptz, closed_reason = ${status === 'ReserveExpired' ? 'reserve-expired' : 'booking-expired'},
      version = version + 1 WHERE id = ${bookingId}`;
  };
  const cancel = (minutes: number) => run(cancelBookingCommand, { bookingId, reason: s.reason! }, minutes);

  if (!paid) {
    if (s.fate === 'cancelR') return cancel(5);
    if (s.fate === 'expireR') return expire('ReserveExpired', 181);
    if (s.fate === 'active') return;
    await run(confirmBookingCommand, { bookingId }, s.confirmAfter);
    if (s.fate === 'cancelB') return cancel(s.confirmAfter + 30);
    if (s.fate === 'expireB') return expire('BookingExpired', s.confirmAfter + 48 * 60 + 1);
    if (s.fate === 'sold') await run(startSaleCommand, { bookingId }, s.confirmAfter + s.sellAfter);
    return;
  }
  await run(uploadContractCommand, { bookingId, document: 'files/contract.pdf', requisites }, s.confirmAfter);
  if (s.fate === 'cancelC') return cancel(s.confirmAfter + 1);
  if (s.fate === 'expireC') return expire('ReserveExpired', 181);
  if (s.fate === 'contract') return;
  await run(uploadReceiptCommand, { bookingId, document: 'files/receipt.pdf' }, s.confirmAfter + 1);
  await run(confirmPaymentCommand, { bookingId }, s.confirmAfter + s.payAfter);
  if (s.fate === 'paidSold') await run(startSaleCommand, { bookingId }, s.confirmAfter + s.payAfter + s.sellAfter);
}

/* ---- the truth, from the list -------------------------------------------------------------------- */

const CONFIRMED: Fate[] = ['booked', 'cancelB', 'expireB', 'sold', 'contract', 'expireC', 'cancelC', 'paidBooked', 'paidSold'];
const PAID_STEP: Fate[] = ['booked', 'cancelB', 'expireB', 'sold', 'paidBooked', 'paidSold'];
const SOLD: Fate[] = ['sold', 'paidSold'];

function medianOf(values: number[]): number | null {
  if (values.length === 0) return null;
  const v = [...values].sort((a, b) => a - b);
  const mid = (v.length - 1) / 2;
  return (v[Math.floor(mid)]! + v[Math.ceil(mid)]!) / 2;
}

// the bands written out here, not taken from the code under test
const floorBand = (f: number | null) => (f === null ? 'null' : f <= 5 ? '1-5' : f <= 10 ? '6-10' : f <= 15 ? '11-15' : f <= 20 ? '16-20' : '21+');
const roomBucket = (r: number | null) => (r === null ? 'null' : r === 0 ? 'studio' : r >= 4 ? '4+' : String(r));
function splitBy(rows: Seeded[], keyOf: (s: Seeded) => string) {
  const out: Record<string, { bookings: number; sold: number }> = {};
  for (const s of rows) {
    const k = keyOf(s);
    out[k] ??= { bookings: 0, sold: 0 };
    out[k].bookings += 1;
    if (SOLD.includes(s.fate)) out[k].sold += 1;
  }
  return out;
}

function truth(filter: { from: Date; to: Date; tenantId?: string; projectId?: string }) {
  const rows = seeded.filter((s) => s.createdAt >= filter.from && s.createdAt < filter.to
    && (!filter.tenantId || s.tenantId === filter.tenantId) && (!filter.projectId || s.projectId === filter.projectId));
  const n = (fates: Fate[]) => rows.filter((s) => fates.includes(s.fate)).length;
  const share = (a: number, b: number) => (b > 0 ? a / b : null);
  const created = rows.length;
  const [confirmed, paid, sold] = [n(CONFIRMED), n(PAID_STEP), n(SOLD)];
  const cancelled = rows.filter((s) => s.reason !== null);
  const reasons = new Map<string, number>();
  for (const c of cancelled) reasons.set(c.reason!, (reasons.get(c.reason!) ?? 0) + 1);
  return {
    created, confirmed, paid, sold,
    expired: n(['expireR', 'expireC', 'expireB']),
    cancelled: cancelled.length,
    active: n(['active', 'booked', 'contract', 'paidBooked']),
    conversion: { confirmedOfCreated: share(confirmed, created), paidOfConfirmed: share(paid, confirmed), soldOfPaid: share(sold, paid), soldOfCreated: share(sold, created) },
    medianSeconds: {
      createdToConfirmed: medianOf(rows.filter((s) => CONFIRMED.includes(s.fate)).map((s) => s.confirmAfter * 60)),
      confirmedToPaid: medianOf(rows.filter((s) => ['paidBooked', 'paidSold'].includes(s.fate)).map((s) => s.payAfter * 60)),
      paidToSold: medianOf(rows.filter((s) => SOLD.includes(s.fate)).map((s) => s.sellAfter * 60)),
    },
    expirations: { reservePhase: n(['expireR', 'expireC']), bookingPhase: n(['expireB']) },
    reasons: Object.fromEntries(reasons),
    agents: Object.fromEntries([...new Set(rows.map((s) => s.agentId))].map((a) => {
      const mine = rows.filter((s) => s.agentId === a);
      return [String(a), { bookings: mine.length, sold: mine.filter((s) => SOLD.includes(s.fate)).length, expired: mine.filter((s) => s.fate.startsWith('expire')).length }];
    })),
    projects: Object.fromEntries([...new Set(rows.map((s) => s.projectId))].map((p) => [p, rows.filter((s) => s.projectId === p && SOLD.includes(s.fate)).length])),
    floors: splitBy(rows, (s) => floorBand(s.floor)),
    rooms: splitBy(rows, (s) => roomBucket(s.rooms)),
  };
}

beforeAll(async () => {
  t = await createTestContext();
  const db = t.database.db;
  TENANT.id = await insertTenant(db, 'Девелопер');
  OTHER.id = await insertTenant(db, 'Другой');
  manager = (await insertUser(db, 'developer_manager', TENANT.id)).actor;
  otherManager = (await insertUser(db, 'developer_manager', OTHER.id)).actor;
  pin = (await insertUser(db, 'pin_manager', null)).actor;
  for (const w of [TENANT, OTHER]) w.agents = [(await insertUser(db, 'agent', w.id)).id, (await insertUser(db, 'agent', w.id)).id];
  // a 3-hour reserve: the slowest seeded payment (contract at 50 min, payment 41 min later) stays inside it
  const terms = { reserveDurationMinutes: 180, bookingDurationHours: 48 };
  const programs = {
    [TENANT.id]: { free: (await insertProgram(t, TENANT.id, terms)).id, paid: (await insertProgram(t, TENANT.id, { ...terms, isPaid: true })).id },
    [OTHER.id]: { free: (await insertProgram(t, OTHER.id, terms)).id, paid: (await insertProgram(t, OTHER.id, { ...terms, isPaid: true })).id },
  };
  const requisites = {
    [TENANT.id]: { setId: (await seedRequisiteSet(t, pin, undefined, TENANT.id)).id, version: 1 },
    [OTHER.id]: { setId: (await seedRequisiteSet(t, pin, undefined, OTHER.id)).id, version: 1 },
  };
  const pick = prng(41);
  // a booking every ~2.5 days through 2031, another tenant's in between
  for (let i = 0; i < 150; i++) {
    const w = i % 4 === 3 ? OTHER : TENANT;
    const fates = pick(3) === 0 ? PAID : FREE;
    const fate = fates[pick(fates.length)]!;
    seeded.push({
      tenantId: w.id,
      projectId: w.projects[pick(w.projects.length)]!,
      agentId: pick(5) === 0 ? null : w.agents[pick(w.agents.length)]!,
      fate,
      createdAt: new Date(T0.getTime() + i * 2.5 * DAY + pick(600) * MIN),
      confirmAfter: 1 + pick(50),
      payAfter: 2 + pick(40),
      sellAfter: 10 + pick(600),
      reason: fate.startsWith('cancel') ? REASONS[pick(REASONS.length)]! : null,
      // floors 1–25 and a few unknown; studios to 5 rooms
      floor: pick(12) === 0 ? null : 1 + pick(25),
      rooms: pick(12) === 0 ? null : pick(6),
    });
  }
  for (const s of seeded) await seedBooking(s, programs[s.tenantId]!, requisites[s.tenantId]!);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

const PERIODS: Array<[string, Date, Date]> = [
  ['a year', new Date('2031-01-01T00:00:00Z'), new Date('2032-01-01T00:00:00Z')],
  ['a quarter', new Date('2031-01-01T00:00:00Z'), new Date('2031-04-01T00:00:00Z')],
  ['a month', new Date('2031-05-01T00:00:00+03:00'), new Date('2031-06-01T00:00:00+03:00')],
  ['a week', new Date('2031-03-03T00:00:00Z'), new Date('2031-03-10T00:00:00Z')],
  ['before any booking', new Date('2030-01-01T00:00:00Z'), new Date('2030-02-01T00:00:00Z')],
];

describe('reports.funnel', () => {
  it('the seed is what the test thinks it is (every fate, both tenants, both programs)', async () => {
    const [row] = await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.bookings`;
    expect(row!.n).toBe(seeded.length);
    expect(new Set(seeded.map((s) => s.fate)).size).toBe(FREE.length + PAID.length);
  });

  it.each(PERIODS)('equals the truth for %s (developer manager: own tenant)', async (_name, from, to) => {
    const report = await callerFor(t, manager).reports.funnel({ from, to });
    const want = truth({ from, to, tenantId: TENANT.id });
    expect(report).toMatchObject({
      tenantId: TENANT.id,
      created: want.created, confirmed: want.confirmed, paid: want.paid, sold: want.sold,
      expired: want.expired, cancelled: want.cancelled, active: want.active,
      conversion: want.conversion, expirations: want.expirations,
    });
    const near = (v: number | null) => (v === null ? null : expect.closeTo(v, 3));
    expect(report.medianSeconds).toEqual({
      createdToConfirmed: near(want.medianSeconds.createdToConfirmed),
      confirmedToPaid: near(want.medianSeconds.confirmedToPaid),
      paidToSold: near(want.medianSeconds.paidToSold),
    });
    expect(Object.fromEntries(report.cancellations.reasons.map((r) => [r.reason, r.count]))).toEqual(want.reasons);
    expect(report.cancellations.otherCount).toBe(0);
    expect(Object.fromEntries(report.agents.map((a) => [String(a.agentId), { bookings: a.bookings, sold: a.sold, expired: a.expired }]))).toEqual(want.agents);
    expect(report.agents.filter((a) => a.agentId).every((a) => a.name === 'agent user')).toBe(true);
    expect(Object.fromEntries(report.projects.map((p) => [p.projectId, p.sold]))).toEqual(want.projects);
    expect(Object.fromEntries(report.floors.map((x) => [String(x.band), { bookings: x.bookings, sold: x.sold }]))).toEqual(want.floors);
    expect(Object.fromEntries(report.rooms.map((x) => [String(x.rooms), { bookings: x.bookings, sold: x.sold }]))).toEqual(want.rooms);
    for (const x of [...report.floors, ...report.rooms]) expect(x.soldShare).toBe(x.bookings > 0 ? x.sold / x.bookings : null);
  });

  it('a period with bookings has every step (the seed is not trivially empty)', async () => {
    const report = await callerFor(t, manager).reports.funnel({ from: PERIODS[0]![1], to: PERIODS[0]![2] });
    expect(report.created).toBeGreaterThan(report.confirmed);
    expect(report.confirmed).toBeGreaterThan(report.paid);
    expect(report.paid).toBeGreaterThan(report.sold);
    expect(report.sold).toBeGreaterThan(0);
    expect(report.expirations.reservePhase * report.expirations.bookingPhase * report.cancelled).toBeGreaterThan(0);
  });

  it('filters by project', async () => {
    const [, from, to] = PERIODS[0]!;
    const projectId = TENANT.projects[1]!;
    const report = await callerFor(t, manager).reports.funnel({ from, to, projectId });
    const want = truth({ from, to, tenantId: TENANT.id, projectId });
    expect(report).toMatchObject({ created: want.created, confirmed: want.confirmed, paid: want.paid, sold: want.sold, expired: want.expired, cancelled: want.cancelled });
    expect(report.projects.map((p) => p.projectId)).toEqual([projectId]);
  });

  it('another tenant sees nothing of this one: its manager, and this manager asking for the other tenant', async () => {
    const [, from, to] = PERIODS[0]!;
    const other = await callerFor(t, otherManager).reports.funnel({ from, to });
    expect(other.created).toBe(truth({ from, to, tenantId: OTHER.id }).created);
    expect(other.agents.every((a) => a.agentId === null || OTHER.agents.includes(a.agentId))).toBe(true);
    expect(other.projects.every((p) => OTHER.projects.includes(p.projectId!))).toBe(true);
    // a foreign tenant's id or project does not widen a developer manager's scope
    expect((await callerFor(t, otherManager).reports.funnel({ from, to, tenantId: TENANT.id })).created).toBe(0);
    expect((await callerFor(t, otherManager).reports.funnel({ from, to, projectId: TENANT.projects[0]! })).created).toBe(0);
  });

  it('PIN managers report on any tenant they choose, or on all', async () => {
    const [, from, to] = PERIODS[1]!;
    const c = callerFor(t, pin);
    expect((await c.reports.funnel({ from, to, tenantId: OTHER.id })).sold).toBe(truth({ from, to, tenantId: OTHER.id }).sold);
    expect((await c.reports.funnel({ from, to, tenantId: TENANT.id })).created).toBe(truth({ from, to, tenantId: TENANT.id }).created);
    expect((await c.reports.funnel({ from, to })).created).toBe(truth({ from, to }).created);
    expect((await c.reports.tenants()).map((x) => x.id)).toEqual(expect.arrayContaining([TENANT.id, OTHER.id]));
  });

  it('is for developer managers and PIN managers only: agents, viewers and ops get FORBIDDEN', async () => {
    const [, from, to] = PERIODS[0]!;
    for (const role of ['agent', 'viewer'] as const) {
      await expectTrpcError(callerFor(t, actor(role, TENANT.id)).reports.funnel({ from, to }), 'FORBIDDEN');
    }
    await expectTrpcError(callerFor(t, actor('ops', null)).reports.funnel({ from, to }), 'FORBIDDEN');
    await expectTrpcError(callerFor(t, manager).reports.tenants(), 'FORBIDDEN');
    expect((await httpCall(t, null, 'reports.funnel', { from, to }, 'query')).status).toBe(401);
  });

  it('refuses a reversed, empty or over-long period and a malformed project with a typed 400', async () => {
    const cases = [
      { from: new Date('2031-02-01T00:00:00Z'), to: new Date('2031-01-01T00:00:00Z') },
      { from: new Date('2031-02-01T00:00:00Z'), to: new Date('2031-02-01T00:00:00Z') },
      { from: new Date('2031-01-01T00:00:00Z'), to: new Date('2032-01-03T00:00:00Z') },
      { from: new Date('2031-01-01T00:00:00Z'), to: new Date('2031-02-01T00:00:00Z'), projectId: 'not-a-uuid' },
      { from: new Date('1970-01-01T00:00:00Z'), to: new Date('1970-02-01T00:00:00Z') },
      { from: 'yesterday', to: new Date('2031-02-01T00:00:00Z') },
      { to: new Date('2031-02-01T00:00:00Z') },
    ];
    for (const input of cases) {
      const answer = await httpCall(t, manager, 'reports.funnel', input, 'query');
      expect(answer.status, JSON.stringify(input)).toBe(400);
      expect(answer.error?.domainCode).toBe('VALIDATION_ERROR');
    }
    // 366 days is the longest period
    const leap = await callerFor(t, manager).reports.funnel({ from: new Date('2031-01-01T00:00:00Z'), to: new Date('2032-01-02T00:00:00Z') });
    expect(leap.created).toBe(truth({ from: new Date('2031-01-01T00:00:00Z'), to: new Date('2032-01-02T00:00:00Z'), tenantId: TENANT.id }).created);
  });
});

describe('the daily rollup (job reports-daily-rollup)', () => {
  const jobCtx = (): JobContext<Env> => ({
    database: t.database, env: t.env, logger: t.logger, runId: randomUUID(), signal: new AbortController().signal, trigger: 'manual', kafka: createKafka(t.env),
  });
  const rollUp = (now: Date) => createReportsDailyRollupJob({ now: () => now }).run(jobCtx());
  // periods with partial days at both edges (Moscow midnights, a mid-day start), a whole-day one, one inside a day
  const EDGED: Array<[string, Date, Date]> = [
    ['a year from a Moscow midnight', new Date('2031-01-01T00:00:00+03:00'), new Date('2032-01-01T00:00:00+03:00')],
    ['a quarter starting mid-day', new Date('2031-04-02T13:17:00Z'), new Date('2031-07-01T00:00:00+03:00')],
    ['whole UTC days', new Date('2031-03-01T00:00:00Z'), new Date('2031-09-01T00:00:00Z')],
    ['inside one day', new Date('2031-05-10T01:00:00Z'), new Date('2031-05-10T23:00:00Z')],
  ];
  const AFTER_2031 = new Date('2032-01-05T12:00:00Z');

  it('rolls up every ended day from the first booking, a bounded number per cycle, and no day that has not ended', async () => {
    // "now" mid-2031: the days up to yesterday only
    const first = await rollUp(new Date('2031-03-01T12:00:00Z'));
    expect(first).toMatchObject({ SkippedLockedCount: 0 });
    const [{ last }] = await t.database.sql<{ last: string }[]>`SELECT max(day)::text AS last FROM crm.booking_rollup_days`;
    expect(last).toBe('2031-02-28');
    let cycles = 1;
    for (let s = await rollUp(AFTER_2031); ; s = await rollUp(AFTER_2031)) {
      cycles += 1;
      expect(s.DaysRolledUp).toBeLessThanOrEqual(120);
      if (!s.HasMore) break;
    }
    expect(cycles).toBeGreaterThan(2);
    const [days] = await t.database.sql<{ n: number; first: string; last: string; bookings: number }[]>`
      SELECT count(*)::int AS n, min(day)::text AS first, max(day)::text AS last, sum(bookings)::int AS bookings FROM crm.booking_rollup_days`;
    expect(days).toEqual({ n: 369, first: '2031-01-01', last: '2032-01-04', bookings: seeded.filter((s) => s.createdAt < new Date('2032-01-05T00:00:00Z')).length });
  });

  it('a day is settled only when all its bookings had ended; the others are rolled up again each cycle', async () => {
    const activeDays = new Set(seeded.filter((s) => ['active', 'booked', 'contract', 'paidBooked'].includes(s.fate)).map((s) => s.createdAt.toISOString().slice(0, 10)));
    const unsettled = (await t.database.sql<{ day: string }[]>`SELECT day::text AS day FROM crm.booking_rollup_days WHERE NOT settled ORDER BY day`).map((r) => r.day);
    expect(unsettled).toEqual([...activeDays].sort());
    expect(await rollUp(AFTER_2031)).toMatchObject({ DaysRolledUp: activeDays.size, DaysSettled: 0, HasMore: false });
  });

  it.each(EDGED)('gives the same report as crm.bookings alone for %s (settled days from the rollup, the rest raw)', async (_name, from, to) => {
    for (const who of [manager, pin]) {
      const fast = await funnelReport(t.database.db, who, { from, to });
      const slow = await funnelReport(t.database.db, who, { from, to }, { useRollup: false });
      expect(fast).toEqual(slow);
      // and both are the truth
      expect(fast.created).toBe(truth({ from, to, tenantId: who === manager ? TENANT.id : undefined }).created);
    }
    const projectId = TENANT.projects[0]!;
    expect(await funnelReport(t.database.db, manager, { from, to, projectId })).toEqual(await funnelReport(t.database.db, manager, { from, to, projectId }, { useRollup: false }));
  });

  it('reads settled whole days from the rollup and only the partial edge days and unsettled days from the bookings', async () => {
    const [, from, to] = EDGED[0]!;
    const sources = await funnelSources(t.database.db, { from, to });
    expect(sources.rolledUpDays.length).toBeGreaterThan(300);
    // raw: the 3 h before the first whole day, the 21 h after the last, and the whole days not settled
    const unsettled = (await t.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM crm.booking_rollup_days
      WHERE NOT settled AND day >= '2031-01-01' AND day < '2031-12-31'`)[0]!.n;
    expect(unsettled).toBeGreaterThan(0);
    const rawMs = sources.raw.reduce((ms, r) => ms + (r.to.getTime() - r.from.getTime()), 0);
    expect(rawMs).toBe(unsettled * DAY + 24 * HOUR);
    expect(sources.raw[0]!.from).toEqual(from);
    expect(sources.raw[sources.raw.length - 1]!.to).toEqual(to);
    // the rollup is what is read: a changed rollup row changes the answer (put back after)
    const day = sources.rolledUpDays.find((d) => seeded.some((s) => s.tenantId === TENANT.id && s.createdAt.toISOString().startsWith(d)))!;
    const before = await funnelReport(t.database.db, manager, { from, to });
    await t.database.sql`UPDATE crm.booking_daily_rollup SET bookings = bookings + 1000 WHERE day = ${day}::date AND tenant_id = ${TENANT.id} AND dim = 'all'`;
    try {
      expect((await funnelReport(t.database.db, manager, { from, to })).created).toBe(before.created + 1000);
    } finally {
      await t.database.sql`UPDATE crm.booking_daily_rollup SET bookings = bookings - 1000 WHERE day = ${day}::date AND tenant_id = ${TENANT.id} AND dim = 'all'`;
    }
  });

  it('a day whose last booking ends is rolled up again and settled, and the report follows', async () => {
    const open = seeded.find((s) => s.tenantId === TENANT.id && s.fate === 'active')!;
    const day = open.createdAt.toISOString().slice(0, 10);
    const [{ id }] = await t.database.sql<{ id: string }[]>`SELECT id FROM crm.bookings WHERE created_at = ${open.createdAt.toISOString()}::timestamptz`;
    await t.database.db.transaction((tx) => cancelBookingCommand(tx, { bookingId: id, reason: 'Клиент передумал' }, commandContext(pin, randomUUID(), new Date(open.createdAt.getTime() + HOUR))));
    open.fate = 'cancelR';
    open.reason = 'Клиент передумал';
    const others = seeded.filter((s) => s.createdAt.toISOString().startsWith(day) && ['active', 'booked', 'contract', 'paidBooked'].includes(s.fate));
    await rollUp(AFTER_2031);
    const [row] = await t.database.sql<{ settled: boolean }[]>`SELECT settled FROM crm.booking_rollup_days WHERE day = ${day}::date`;
    expect(row!.settled).toBe(others.length === 0);
    const [, from, to] = EDGED[0]!;
    const fast = await funnelReport(t.database.db, manager, { from, to });
    expect(fast).toEqual(await funnelReport(t.database.db, manager, { from, to }, { useRollup: false }));
    expect(fast.cancelled).toBe(truth({ from, to, tenantId: TENANT.id }).cancelled);
  });

  it('one instance at a time: a cycle that finds the lock taken is skipped', async () => {
    const holder = await t.database.sql.reserve();
    try {
      await holder`SELECT pg_advisory_lock(hashtext('crm.reports-daily-rollup'), 0)`;
      expect(await rollUp(AFTER_2031)).toEqual({ DaysRolledUp: 0, DaysSettled: 0, SkippedLockedCount: 1, HasMore: false });
    } finally {
      await holder`SELECT pg_advisory_unlock(hashtext('crm.reports-daily-rollup'), 0)`;
      holder.release();
    }
  });
});

describe('the cohort read at volume', () => {
  it('reads one tenant\'s period through ix_bookings_tenant_created and looks up each booking\'s deal and object by key', async () => {
    // a year of bookings of 20 tenants (the seeded ones above are a handful among them), each with its own
    // deal and object as in production, statistics fresh
    await t.database.sql`INSERT INTO crm.deals (id, tenant_id, title, status)
      SELECT ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, ('00000000-0000-4000-9000-' || lpad((g % 20 + 1)::text, 12, '0'))::uuid, 'Deal', 'Application'
      FROM generate_series(1, 60000) g`;
    await t.database.sql`INSERT INTO crm.property_objects (id, tenant_id, project_id, status, source_version, source_changed_at, floor, rooms)
      SELECT ('00000000-0000-4000-a000-' || lpad(g::text, 12, '0'))::uuid, ('00000000-0000-4000-9000-' || lpad((g % 20 + 1)::text, 12, '0'))::uuid,
             ('00000000-0000-4000-b000-' || lpad((g % 20 + 1)::text, 12, '0'))::uuid, 'Free', 1, now(), 1 + g % 25, g % 5
      FROM generate_series(1, 60000) g`;
    await t.database.sql`INSERT INTO crm.bookings (id, tenant_id, deal_id, property_object_id, program_id, status, reserve_expires_at, payment_status, created_at, updated_at)
      SELECT gen_random_uuid(), ('00000000-0000-4000-9000-' || lpad((g % 20 + 1)::text, 12, '0'))::uuid,
             ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, ('00000000-0000-4000-a000-' || lpad(g::text, 12, '0'))::uuid,
             (SELECT id FROM crm.booking_programs LIMIT 1), 'Cancelled', ts + interval '1 hour', 'NotRequired', ts, ts
      FROM generate_series(1, 60000) g, LATERAL (SELECT timestamptz '2031-01-01' + (g * interval '525 seconds') AS ts) x`;
    for (const table of ['crm.bookings', 'crm.deals', 'crm.property_objects']) await t.database.sql.unsafe(`ANALYZE ${table}`);
    const input = { from: new Date('2031-05-01T00:00:00Z'), to: new Date('2031-06-01T00:00:00Z') };
    const [plan] = await t.database.db.execute<{ 'QUERY PLAN': unknown }>(
      sql`EXPLAIN (FORMAT JSON) ${cohortSql({ own: '00000000-0000-4000-9000-000000000003', requested: null }, input)}`);
    const text = JSON.stringify(plan!['QUERY PLAN']);
    expect(text).toContain('ix_bookings_tenant_created');
    // a month of one tenant is ~250 bookings here: neither the deals nor the objects of every booking ever made are read
    for (const table of ['bookings', 'deals', 'property_objects']) expect(text).not.toMatch(new RegExp(`"Seq Scan"[^}]*"Relation Name":"${table}"`));
    expect(text).toContain('deals_pkey');
    expect(text).toContain('property_objects_pkey');
  });
});
