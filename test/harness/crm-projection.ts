import { randomUUID } from 'node:crypto';
import type { Database } from '../../server/platform/db';

/**
 * Test support: fills crm.property_objects as crm's projection consumer would have (DESIGN decision 8)
 * for objects a test inserted straight into chessboard's tables or only pretends to exist. Tests of the
 * projection itself go through the real consumer instead.
 */
export interface ProjectedObject {
  id: string;
  tenantId: string;
  projectId?: string;
  status?: 'Free' | 'Reserved' | 'Booked' | 'Sold' | 'Hidden';
  version?: number;
  deleted?: boolean;
}

export async function projectObjects(database: Database, objects: ProjectedObject[]): Promise<void> {
  if (objects.length === 0) return;
  const at = new Date().toISOString();
  const rows = objects.map((o) => ({
    id: o.id,
    tenant_id: o.tenantId,
    project_id: o.projectId ?? randomUUID(),
    status: o.status ?? 'Free',
    deleted: o.deleted ?? false,
    source_version: o.version ?? 1,
    source_changed_at: at,
    deleted_at: o.deleted ? at : null,
  }));
  for (let i = 0; i < rows.length; i += 1000) {
    await database.sql`INSERT INTO crm.property_objects ${database.sql(rows.slice(i, i + 1000) as never)}
      ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, project_id = excluded.project_id, status = excluded.status,
        deleted = excluded.deleted, source_version = excluded.source_version, deleted_at = excluded.deleted_at`;
  }
}

/** A bookable (Free) object of `tenantId` that exists only in crm's view: for crm tests that need no chessboard row. */
export async function projectedObjectOf(database: Database, tenantId: string, status: ProjectedObject['status'] = 'Free'): Promise<string> {
  const id = randomUUID();
  await projectObjects(database, [{ id, tenantId, status }]);
  return id;
}
