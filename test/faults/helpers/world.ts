import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import superjson from 'superjson';
import type { Database } from '../../../server/platform/db';

/**
 * Seed data of the fault scenarios, written directly (the commands have their own tests): a tenant
 * with a project, a building, a free booking program, N Free objects and N deals in Application.
 */
export interface World {
  tenantId: string;
  projectId: string;
  buildingId: string;
  programId: string;
  objectIds: string[];
  dealIds: string[];
}

export async function seedWorld(database: Database, n: number, opts: { tenantId?: string } = {}): Promise<World> {
  const { sql } = database;
  const tenantId = opts.tenantId ?? randomUUID();
  const projectId = randomUUID();
  const buildingId = randomUUID();
  const programId = randomUUID();
  await sql`INSERT INTO chessboard.projects (id, tenant_id, name, city) VALUES (${projectId}, ${tenantId}, 'Faults', 'Test')`;
  await sql`INSERT INTO chessboard.buildings (id, tenant_id, project_id, name, sections, floors) VALUES (${buildingId}, ${tenantId}, ${projectId}, 'B', 10, 500)`;
  await sql`INSERT INTO crm.booking_programs (id, tenant_id, name, is_paid, reserve_duration_minutes, booking_duration_hours)
            VALUES (${programId}, ${tenantId}, 'Free', false, 60, 48)`;
  const objectIds = Array.from({ length: n }, () => randomUUID());
  const dealIds = Array.from({ length: n }, () => randomUUID());
  await insertChunked(sql, 'chessboard.property_objects', objectIds.map((id, i) => ({
    id, tenant_id: tenantId, project_id: projectId, building_id: buildingId, section: 1 + (i % 10), floor: 1 + Math.floor(i / 10) % 500,
    number: String(10_000 + i), rooms: 2, area: 50, price: 9_000_000, status: 'Free', status_source: 'Import', version: 1,
  })));
  // crm's view of the objects (DESIGN decision 8), as its projection consumer would have it
  await insertChunked(sql, 'crm.property_objects', objectIds.map((id) => ({
    id, tenant_id: tenantId, project_id: projectId, status: 'Free', source_version: 1, source_changed_at: new Date().toISOString(),
  })));
  await insertChunked(sql, 'crm.deals', dealIds.map((id) => ({ id, tenant_id: tenantId, title: 'Deal', status: 'Application' })));
  return { tenantId, projectId, buildingId, programId, objectIds, dealIds };
}

async function insertChunked(sql: postgres.Sql, table: string, rows: Record<string, unknown>[]): Promise<void> {
  const [schema, name] = table.split('.');
  for (let i = 0; i < rows.length; i += 1000) {
    await sql`INSERT INTO ${sql(schema!)}.${sql(name!)} ${sql(rows.slice(i, i + 1000) as never)}`;
  }
}

/** tRPC over HTTP (superjson wire format) against a web host; returns the status and the parsed body. */
export async function trpcHttp(baseUrl: string, pathName: string, input: unknown, opts: { cookie?: string; type?: 'query' | 'mutation'; headers?: Record<string, string>; timeoutMs?: number } = {}) {
  const type = opts.type ?? 'mutation';
  const headers: Record<string, string> = { ...(opts.cookie ? { cookie: opts.cookie } : {}), ...opts.headers };
  let res: Response;
  if (type === 'query') {
    const q = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}`;
    res = await fetch(`${baseUrl}/api/trpc/${pathName}${q}`, { headers, signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000) });
  } else {
    res = await fetch(`${baseUrl}/api/trpc/${pathName}`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(superjson.serialize(input)),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    });
  }
  const text = await res.text();
  let body: { result?: { data?: { json?: unknown } }; error?: { json?: { message?: string; data?: { code?: string; domainCode?: string | null; httpStatus?: number } } } } = {};
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body, text, setCookie: res.headers.getSetCookie?.() ?? [] };
}

/** Signs in through the web host and returns the session cookie ("pin_session=…"). */
export async function signInOverHttp(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await trpcHttp(baseUrl, 'auth.signIn', { email, password });
  const cookie = res.setCookie.find((c) => c.startsWith('pin_session='));
  if (res.status !== 200 || !cookie) throw new Error(`sign-in failed: ${res.status} ${res.text.slice(0, 300)}`);
  return cookie.split(';')[0]!;
}
