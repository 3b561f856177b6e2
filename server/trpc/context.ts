import { randomUUID } from 'node:crypto';
import type { Actor } from '../auth/actor';
import type { Database } from '../platform/db';
import type { Env } from '../main/env';
import type { Logger } from '../platform/logger';

export interface Context {
  database: Database;
  /** the read replica (DATABASE_READ_URL), when one is configured: only reads that may lag use it (readDatabaseOf) */
  readDatabase?: Database;
  env: Env;
  logger: Logger;
  actor: Actor | null;
  /** flows into outbox rows, Kafka headers and consumer logs */
  correlationId: string;
  /** the session token hash of the caller, if any (sign-out) */
  sessionId: string | null;
  /** response cookie writer (set by the HTTP adapter) */
  setCookie?: (cookie: string) => void;
  /** the counted client address (server/auth/client-ip.ts) */
  ip: string;
  /** the call came in a `?batch=1` request (auth.signIn refuses to ride in one) */
  batched?: boolean;
}

export function createContextFor(base: Pick<Context, 'database' | 'env' | 'logger'>, actor: Actor | null, extra: Partial<Context> = {}): Context {
  return { ...base, actor, correlationId: randomUUID(), sessionId: null, ip: '127.0.0.1', ...extra };
}

/**
 * The database for a read that may be a moment behind (the ops dashboard's figures): the read replica
 * when DATABASE_READ_URL is set, the primary otherwise. Never for a command's reads.
 */
export function readDatabaseOf(ctx: Pick<Context, 'database' | 'readDatabase'>): Database {
  return ctx.readDatabase ?? ctx.database;
}
