import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { expect } from 'vitest';
import type { Actor, Role } from '../../auth/actor';
import type { Database } from '../../platform/db';
import { projectObjects } from '../../testing/crm-projection';
import type { TestContext } from '../../testing/harness';
import { createContextFor } from '../../trpc/context';
import { createCallerFactory } from '../../trpc/init';
import { opsRouter } from '../router';

/** Test fixtures of the ops dashboard integration tests (rows written directly; not used by the app). */

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function actorOf(role: Role, tenantId: string | null = null): Actor {
  return { userId: randomUUID(), role, tenantId: role === 'ops' || role === 'pin_manager' ? null : tenantId ?? randomUUID() };
}

export function opsCaller(t: TestContext, actor: Actor | null) {
  return createCallerFactory(opsRouter)(createContextFor({ database: t.database, env: t.env, logger: t.logger }, actor)).dashboard;
}

export async function errorOf(p: Promise<unknown>): Promise<TRPCError & { cause?: { code?: string } }> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(TRPCError);
  return err as TRPCError & { cause?: { code?: string } };
}

export interface World {
  tenantId: string;
  projectId: string;
  buildingId: string;
}

/** A tenant (with its name), a project and a building. */
export async function insertWorld(database: Database, name = 'Tenant'): Promise<World> {
  const tenantId = randomUUID();
  const projectId = randomUUID();
  const buildingId = randomUUID();
  await database.sql`INSERT INTO auth.tenants (id, name) VALUES (${tenantId}, ${name})`;
  await database.sql`INSERT INTO chessboard.projects (id, tenant_id, name, city) VALUES (${projectId}, ${tenantId}, ${'Project of ' + name}, 'Москва')`;
  await database.sql`INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors) VALUES (${buildingId}, ${tenantId}, ${projectId}, 'B', 4, 30)`;
  return { tenantId, projectId, buildingId };
}

let objectNo = 100;

/** One property object; a held one gets its deal (and optionally booking). `changedAt` sets updated_at/status_changed_at. */
export async function insertObject(
  database: Database,
  w: World,
  o: { status: 'Free' | 'Reserved' | 'Booked' | 'Sold'; timer?: Date; holdDealId?: string; holdBookingId?: string | null; changedAt?: Date; number?: string },
): Promise<{ id: string; number: string; holdDealId: string | null }> {
  const id = randomUUID();
  const held = o.status === 'Reserved' || o.status === 'Booked';
  const holdDealId = held ? o.holdDealId ?? randomUUID() : null;
  const number = o.number ?? String(++objectNo);
  const changedAt = o.changedAt ?? new Date(Date.now() - DAY);
  await database.sql`INSERT INTO chessboard.property_objects
      (id, tenant_id, project_id, building_id, section, floor, number, rooms, area, price, status, reserved_until, booked_until,
       hold_deal_id, hold_booking_id, sold_at, status_source, status_changed_at, updated_at, version)
    VALUES (${id}, ${w.tenantId}, ${w.projectId}, ${w.buildingId}, 1, 1, ${number}, 2, 55.5, 10000000, ${o.status},
       ${o.status === 'Reserved' ? iso(o.timer ?? new Date(Date.now() + HOUR)) : null}::timestamptz,
       ${o.status === 'Booked' ? iso(o.timer ?? new Date(Date.now() + DAY)) : null}::timestamptz,
       ${holdDealId}, ${held ? o.holdBookingId ?? null : null}, ${o.status === 'Sold' ? iso(new Date()) : null}::timestamptz,
       ${held ? 'Crm' : 'Import'}, ${iso(changedAt)}::timestamptz, ${iso(changedAt)}::timestamptz, 2)`;
  await projectObjects(database, [{ id, tenantId: w.tenantId, projectId: w.projectId, status: o.status, version: 2 }]);
  return { id, number, holdDealId };
}

/** A crm deal + program + booking (status and timers as given), updated `updatedAt` (default a day ago). */
export async function insertBooking(
  database: Database,
  w: World,
  b: {
    propertyObjectId: string;
    dealId?: string;
    status: 'Reserved' | 'AwaitingPayment' | 'Booked' | 'Completed' | 'ReserveExpired' | 'BookingExpired' | 'Cancelled';
    reserveExpiresAt?: Date;
    bookingExpiresAt?: Date | null;
    version?: number;
    updatedAt?: Date;
    createdAt?: Date;
  },
): Promise<{ id: string; dealId: string; version: number }> {
  const id = randomUUID();
  const dealId = b.dealId ?? randomUUID();
  const programId = randomUUID();
  const updatedAt = b.updatedAt ?? new Date(Date.now() - DAY);
  const createdAt = b.createdAt ?? new Date(updatedAt.getTime() - HOUR);
  const booked = b.status === 'Booked' || b.status === 'BookingExpired' || b.status === 'Completed';
  const terminal = !['Reserved', 'AwaitingPayment', 'Booked'].includes(b.status);
  await database.sql`INSERT INTO crm.deals (id, tenant_id, title, status) VALUES (${dealId}, ${w.tenantId}, 'Deal', ${terminal ? 'Application' : 'Booking'}) ON CONFLICT DO NOTHING`;
  await database.sql`INSERT INTO crm.booking_programs (id, tenant_id, name) VALUES (${programId}, ${w.tenantId}, 'Free')`;
  const version = b.version ?? (b.status === 'Reserved' ? 1 : 2);
  await database.sql`INSERT INTO crm.bookings
      (id, tenant_id, deal_id, property_object_id, program_id, status, reserve_expires_at, booking_expires_at, booked_at, payment_status,
       closed_reason, closed_at, version, created_at, updated_at)
    VALUES (${id}, ${w.tenantId}, ${dealId}, ${b.propertyObjectId}, ${programId}, ${b.status},
       ${iso(b.reserveExpiresAt ?? new Date(Date.now() + HOUR))}::timestamptz,
       ${iso(booked ? b.bookingExpiresAt ?? new Date(Date.now() + DAY) : b.bookingExpiresAt ?? null)}::timestamptz,
       ${booked ? iso(createdAt) : null}::timestamptz, 'NotRequired', ${b.status === 'Cancelled' ? 'client changed their mind' : null},
       ${terminal ? iso(updatedAt) : null}::timestamptz, ${version}, ${iso(createdAt)}::timestamptz, ${iso(updatedAt)}::timestamptz)`;
  return { id, dealId, version };
}

export async function insertHoldRelease(
  database: Database,
  w: World,
  r: { propertyObjectId: string; releasedAt: Date; source?: 'ExpirationJob' | 'Manual'; holdDealId?: string | null; overdueByMs?: number },
): Promise<void> {
  await database.sql`INSERT INTO chessboard.hold_releases
      (property_object_id, tenant_id, project_id, hold_deal_id, from_status, expired_timer_at, overdue_by_ms, status_source, run_id, message_id, released_at)
    VALUES (${r.propertyObjectId}, ${w.tenantId}, ${w.projectId}, ${r.holdDealId ?? null}, 'Reserved',
       ${iso(new Date(r.releasedAt.getTime() - (r.overdueByMs ?? 15 * MIN)))}::timestamptz, ${r.overdueByMs ?? 15 * MIN},
       ${r.source ?? 'ExpirationJob'}, ${randomUUID()}, ${randomUUID()}, ${iso(r.releasedAt)}::timestamptz)`;
}

export async function insertOutboxRow(
  database: Database,
  outbox: 'crm' | 'chessboard',
  r: { createdAt: Date; publishedAt?: Date | null; attempts?: number; lastError?: string | null; topic?: string; aggregateId?: string; messageId?: string },
): Promise<string> {
  const messageId = r.messageId ?? randomUUID();
  const aggregateId = r.aggregateId ?? randomUUID();
  const topic = r.topic ?? (outbox === 'crm' ? 'pin.crm.booking-created.v1' : 'pin.chessboard.property-object-upserted.v1');
  await database.sql`INSERT INTO ${database.sql(outbox)}.outbox (message_id, topic, key, aggregate_type, aggregate_id, payload, headers, created_at, published_at, attempts, last_error)
    VALUES (${messageId}, ${topic}, ${aggregateId}, 'Test', ${aggregateId}, ${JSON.stringify({ messageId })}::jsonb, '{}'::jsonb,
       ${iso(r.createdAt)}::timestamptz, ${iso(r.publishedAt ?? null)}::timestamptz, ${r.attempts ?? 0}, ${r.lastError ?? null})`;
  return messageId;
}

export async function insertJobRun(
  database: Database,
  r: { job: string; startedAt: Date; durationMs?: number; status?: string; summary?: Record<string, unknown>; error?: string | null; trigger?: string },
): Promise<string> {
  const runId = randomUUID();
  await database.sql`INSERT INTO ops.job_runs (job, run_id, trigger, started_at, finished_at, status, summary, error)
    VALUES (${r.job}, ${runId}, ${r.trigger ?? 'schedule'}, ${iso(r.startedAt)}::timestamptz,
       ${iso(new Date(r.startedAt.getTime() + (r.durationMs ?? 100)))}::timestamptz, ${r.status ?? 'succeeded'},
       ${JSON.stringify(r.summary ?? {})}::jsonb, ${r.error ?? null})`;
  return runId;
}

export async function auditRows(database: Database, action: string) {
  return database.sql<{ actor_id: string; action: string; target_type: string; target_id: string; reason: string | null; details: Record<string, unknown> | null }[]>`
    SELECT actor_id, action, target_type, target_id, reason, details FROM ops.audit_log WHERE action = ${action} ORDER BY id`;
}
