import { randomUUID } from 'node:crypto';
import type { Db } from '../platform/db';
import { tenants, users } from './schema';
import { buildings, projects, propertyObjects } from '../chessboard/schema';
import { crmPropertyObjects } from '../crm/schema';
import type { Actor, Role } from './actor';
import { hashPassword } from './session';

/** Test fixtures shared by the auth, chessboard and ops integration tests (not used by the app). */

export const ALL_ROLES: Role[] = ['agent', 'developer_manager', 'pin_manager', 'ops', 'viewer'];
export const CROSS_TENANT_ROLES: Role[] = ['pin_manager', 'ops'];

let cachedHash: Promise<string> | undefined;
export const TEST_PASSWORD = 'correct horse battery staple';
const passwordHash = () => (cachedHash ??= hashPassword(TEST_PASSWORD));

export async function insertTenant(db: Db, name = 'Tenant'): Promise<string> {
  const id = randomUUID();
  await db.insert(tenants).values({ id, name });
  return id;
}

export async function insertUser(db: Db, role: Role, tenantId: string | null, email = `${role}-${randomUUID().slice(0, 8)}@test.local`): Promise<{ id: string; email: string; actor: Actor }> {
  const id = randomUUID();
  const scoped = role === 'pin_manager' || role === 'ops' ? null : tenantId;
  await db.insert(users).values({ id, email, displayName: `${role} user`, passwordHash: await passwordHash(), role, tenantId: scoped });
  return { id, email, actor: { userId: id, role, tenantId: scoped } };
}

export interface TenantWorld {
  tenantId: string;
  projectId: string;
  buildingId: string;
  objectIds: { free: string; reserved: string; booked: string; sold: string };
}

/** One project with one building of 2 sections × 2 floors: a Free, a Reserved, a Booked and a Sold object. */
export async function insertTenantWorld(db: Db, tenantId: string, now = new Date()): Promise<TenantWorld> {
  const projectId = randomUUID();
  const buildingId = randomUUID();
  await db.insert(projects).values({ id: projectId, tenantId, name: `Project ${projectId.slice(0, 4)}`, city: 'Test' });
  await db.insert(buildings).values({ id: buildingId, tenantId, projectId, name: 'Building 1', sections: 2, floors: 2 });
  const objectIds = { free: randomUUID(), reserved: randomUUID(), booked: randomUUID(), sold: randomUUID() };
  const base = { tenantId, projectId, buildingId, rooms: 2, area: 54.3, price: 9_870_000, statusSource: 'Import' as const };
  await db.insert(propertyObjects).values([
    { ...base, id: objectIds.free, section: 1, floor: 1, number: '101', status: 'Free' },
    { ...base, id: objectIds.reserved, section: 2, floor: 1, number: '102', status: 'Reserved', reservedUntil: new Date(now.getTime() + 3600_000), holdDealId: randomUUID() },
    { ...base, id: objectIds.booked, section: 1, floor: 2, number: '201', status: 'Booked', bookedUntil: new Date(now.getTime() + 48 * 3600_000), holdDealId: randomUUID() },
    { ...base, id: objectIds.sold, section: 2, floor: 2, number: '202', status: 'Sold', soldAt: now },
  ]);
  // crm's view of them, as its projection consumer would have it (DESIGN decision 8)
  const view = { tenantId, projectId, sourceVersion: 1, sourceChangedAt: now };
  await db.insert(crmPropertyObjects).values([
    { ...view, id: objectIds.free, status: 'Free' }, { ...view, id: objectIds.reserved, status: 'Reserved' },
    { ...view, id: objectIds.booked, status: 'Booked' }, { ...view, id: objectIds.sold, status: 'Sold' },
  ]);
  return { tenantId, projectId, buildingId, objectIds };
}
