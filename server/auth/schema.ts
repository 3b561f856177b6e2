import { sql } from 'drizzle-orm';
import { bigserial, boolean, check, index, pgSchema, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { USER_ROLES } from './roles';

/**
 * auth's own tables (users, sessions, sign-in attempts, tenant names) in the `auth` PostgreSQL schema.
 * They lived in server/ops/schema.ts, which made auth import ops; the tables and their schema are the
 * same, so moving the declarations here changes no migration.
 */
export const auth = pgSchema('auth');


export const users = auth.table('users', {
  id: uuid('id').primaryKey(),
  email: text('email').notNull().unique(),
  displayName: text('display_name').notNull(),
  passwordHash: text('password_hash').notNull(),
  role: text('role', { enum: USER_ROLES }).notNull(),
  /**
   * null for cross-tenant roles (pin_manager, ops) and for an investor, whose deals may be with any
   * developer (crm scopes an investor by crm.deals.investor_id); viewer/agent/developer_manager are scoped
   */
  tenantId: uuid('tenant_id'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  check('ck_users_role', sql`${t.role} IN ('agent', 'developer_manager', 'pin_manager', 'ops', 'viewer', 'investor')`),
  // a tenant role without a tenant would be scoped to nothing (tenantScope refuses it too)
  check('ck_users_tenant_role_has_tenant', sql`${t.role} IN ('pin_manager', 'ops', 'investor') OR ${t.tenantId} IS NOT NULL`),
]);

export const sessions = auth.table('sessions', {
  id: text('id').primaryKey(), // sha256 of the cookie token; the token itself is never stored
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
}, (t) => [index('ix_sessions_user').on(t.userId)]);

export const loginAttempts = auth.table('login_attempts', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  emailHash: text('email_hash').notNull(),
  ip: text('ip').notNull(),
  at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  success: boolean('success').notNull(),
}, (t) => [index('ix_login_attempts_email').on(t.emailHash, t.at), index('ix_login_attempts_ip').on(t.ip, t.at)]);

export const tenants = auth.table('tenants', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull(),
});

/**
 * auth's published reads (the `v_*` views): what other contexts may read of auth's tables. A user is named
 * to other contexts by display name and role — never by e-mail or password hash.
 */
export const usersView = auth.view('v_users').as((qb) =>
  qb.select({ id: users.id, displayName: users.displayName, role: users.role, tenantId: users.tenantId }).from(users));
export const tenantsView = auth.view('v_tenants').as((qb) => qb.select().from(tenants));
