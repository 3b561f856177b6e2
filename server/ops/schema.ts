import { sql } from 'drizzle-orm';
import { bigserial, boolean, check, index, jsonb, pgSchema, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const ops = pgSchema('ops');

export const JOB_RUN_STATUSES = ['running', 'succeeded', 'failed', 'skipped'] as const;

/** One row per job cycle (DESIGN decision 6): the dashboard's run history. */
export const jobRuns = ops.table('job_runs', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  job: text('job').notNull(),
  runId: uuid('run_id').notNull().unique(),
  trigger: text('trigger').notNull().default('schedule'),
  instance: text('instance'),
  startedAt: timestamp('started_at', { withTimezone: true, precision: 3 }).notNull(),
  finishedAt: timestamp('finished_at', { withTimezone: true, precision: 3 }),
  status: text('status', { enum: JOB_RUN_STATUSES }).notNull(),
  summary: jsonb('summary'),
  error: text('error'),
}, (t) => [
  check('ck_job_runs_status', sql`${t.status} IN ('running', 'succeeded', 'failed', 'skipped')`),
  index('ix_job_runs_job_started').on(t.job, t.startedAt),
]);

/** Pause/resume and "run now" requests, obeyed by every worker instance. */
export const jobControls = ops.table('job_controls', {
  job: text('job').primaryKey(),
  paused: boolean('paused').notNull().default(false),
  changedBy: text('changed_by'),
  changedAt: timestamp('changed_at', { withTimezone: true, precision: 3 }),
});

/** Who did what by hand (manual release, DLQ requeue/discard, reconciliation repairs). */
export const auditLog = ops.table('audit_log', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  at: timestamp('at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  actorId: text('actor_id').notNull(),
  action: text('action').notNull(),
  targetType: text('target_type').notNull(),
  targetId: text('target_id').notNull(),
  reason: text('reason'),
  details: jsonb('details'),
}, (t) => [index('ix_audit_log_at').on(t.at)]);

export const auth = pgSchema('auth');

export const USER_ROLES = ['agent', 'developer_manager', 'pin_manager', 'ops', 'viewer'] as const;

export const users = auth.table('users', {
  id: uuid('id').primaryKey(),
  email: text('email').notNull().unique(),
  displayName: text('display_name').notNull(),
  passwordHash: text('password_hash').notNull(),
  role: text('role', { enum: USER_ROLES }).notNull(),
  /** null for cross-tenant roles (pin_manager, ops); viewer/agent/developer_manager are scoped */
  tenantId: uuid('tenant_id'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  check('ck_users_role', sql`${t.role} IN ('agent', 'developer_manager', 'pin_manager', 'ops', 'viewer')`),
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
