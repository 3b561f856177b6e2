import { asc } from 'drizzle-orm';
import type { DbOrTx } from '../platform/db';
import { tenants } from './schema';

/** Every tenant's id and name, by name: the tenant picker of cross-tenant staff (PIN managers' reports). */
export function listTenants(db: DbOrTx): Promise<Array<{ id: string; name: string }>> {
  return db.select({ id: tenants.id, name: tenants.name }).from(tenants).orderBy(asc(tenants.name), asc(tenants.id));
}
