import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { and, eq, gt, sql } from 'drizzle-orm';
import { preparedQuery, type Db } from '../platform/db';
import { sessions, users } from './schema';
import type { Actor } from './actor';

export const SESSION_COOKIE = 'pin_session';

/** argon2id (memory-hard) from @node-rs/argon2; parameters are OWASP's minimum for argon2id. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
}
export function verifyPassword(hashed: string, password: string): Promise<boolean> {
  return verify(hashed, password).catch(() => false);
}

export const sessionIdOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Server-side session: the cookie holds a random token, the database only its hash. */
export async function createSession(db: Db, userId: string, ttlHours: number, now: Date = new Date()): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + ttlHours * 3600_000);
  await db.insert(sessions).values({ id: sessionIdOf(token), userId, expiresAt });
  return { token, expiresAt };
}

// on every API request: built once and run prepared, one round trip instead of two (platform/db.ts)
const sessionLookup = preparedQuery('auth_session_lookup', (db) => db
  .select({ userId: users.id, role: users.role, tenantId: users.tenantId })
  .from(sessions)
  .innerJoin(users, eq(users.id, sessions.userId))
  .where(and(eq(sessions.id, sql.placeholder('id')), gt(sessions.expiresAt, sql.placeholder('now')))));

/** An expired session (expires_at <= now) resolves to null: the caller is anonymous (UNAUTHORIZED). */
export async function resolveSession(db: Db, token: string | undefined | null, now: Date = new Date()): Promise<{ actor: Actor; sessionId: string } | null> {
  if (!token || token.length > 200) return null;
  const id = sessionIdOf(token);
  const rows = await sessionLookup(db, { id, now: now.toISOString() });
  const row = rows[0];
  return row ? { actor: { userId: row.userId, role: row.role, tenantId: row.tenantId }, sessionId: id } : null;
}

/** The channel on which sign-out announces a revoked session (the live feed ends its streams). */
export const SESSION_REVOKED_CHANNEL = 'pin_session_revoked';

/** What the NOTIFY carries for a revoked session: a hash of its id (not the id stored in ops.sessions). */
export const sessionRevocationKey = (sessionId: string) => createHash('sha256').update(`revoked:${sessionId}`).digest('hex');

/**
 * Sign-out: deletes the session and, in the same transaction, NOTIFYs its revocation key — the open
 * live-feed streams of the session end when the deletion commits, not at their next session check.
 */
export async function deleteSession(db: Db, sessionId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.delete(sessions).where(eq(sessions.id, sessionId));
    await tx.execute(sql`SELECT pg_notify(${SESSION_REVOKED_CHANNEL}, ${sessionRevocationKey(sessionId)})`);
  });
}

export function sessionCookie(token: string, expiresAt: Date, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Expires=${expiresAt.toUTCString()}${secure ? '; Secure' : ''}`;
}
export function clearSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`;
}

export function readCookie(header: string | null | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}
