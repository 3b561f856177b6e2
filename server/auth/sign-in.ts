import { createHash } from 'node:crypto';
import { and, count, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../platform/db';
import { AppError } from '../platform/errors';
import { counter } from '../platform/metrics';
import { loginAttempts, tenants, users } from '../ops/schema';
import { tenantScope, type Actor, type Role } from './actor';
import { createSession, hashPassword, verifyPassword } from './session';

/** Brute-force limits: failures per account and per client IP inside a sliding window. */
export const SIGN_IN_LIMITS = {
  windowMs: 15 * 60_000,
  failuresPerAccount: 5,
  failuresPerIp: 20,
} as const;

const signInTotal = counter('auth_sign_in_total', 'Sign-in attempts by result', ['result']);

/** The e-mail is never stored or logged in clear in the attempts table: only its hash. */
export const emailHashOf = (email: string) => createHash('sha256').update(normalizeEmail(email)).digest('hex');
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * A hash to verify against when the account does not exist, so that an unknown e-mail costs the same
 * argon2 time as a wrong password (the response must not reveal whether the account exists).
 */
let dummyHash: Promise<string> | undefined;
const getDummyHash = () => (dummyHash ??= hashPassword('pin-dummy-password-for-timing-equalisation'));

export interface SignedInUser {
  id: string;
  email: string;
  displayName: string;
  role: Role;
  tenantId: string | null;
  tenantName: string | null;
}

export interface SignInInput {
  email: string;
  password: string;
  ip: string;
  ttlHours: number;
  now?: Date;
}

export const invalidCredentials = () =>
  new AppError('AUTH_INVALID_CREDENTIALS', 'UNAUTHORIZED', 'The e-mail or password is incorrect');
const rateLimited = (retryAfterMs: number) =>
  new AppError('AUTH_RATE_LIMITED', 'TOO_MANY_REQUESTS', 'Too many failed sign-in attempts; try again later', {
    retryAfterSeconds: Math.ceil(retryAfterMs / 1000),
  });

/**
 * Verifies the credentials and opens a server-side session. Attempts of one account are serialised by
 * an advisory lock so that parallel guesses cannot slip past the per-account limit; the limit counts
 * failures since the account's last success inside the window. A blocked attempt is not verified and
 * not recorded (it must not extend the lock-out forever).
 */
export async function signIn(db: Db, input: SignInInput): Promise<{ user: SignedInUser; token: string; expiresAt: Date }> {
  const now = input.now ?? new Date();
  const email = normalizeEmail(input.email);
  const emailHash = emailHashOf(email);
  const windowStart = new Date(now.getTime() - SIGN_IN_LIMITS.windowMs);

  const outcome = await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${'auth.sign_in:' + emailHash}, 0))`);
    const [accountFailures] = await tx
      .select({ n: count() })
      .from(loginAttempts)
      .where(and(
        eq(loginAttempts.emailHash, emailHash),
        eq(loginAttempts.success, false),
        gt(loginAttempts.at, sql`GREATEST(${windowStart.toISOString()}::timestamptz, COALESCE((
          SELECT max(s.at) FROM auth.login_attempts s WHERE s.email_hash = ${emailHash} AND s.success), '-infinity'))`),
      ));
    const [ipFailures] = await tx
      .select({ n: count() })
      .from(loginAttempts)
      .where(and(eq(loginAttempts.ip, input.ip), eq(loginAttempts.success, false), gt(loginAttempts.at, windowStart)));
    if (accountFailures.n >= SIGN_IN_LIMITS.failuresPerAccount || ipFailures.n >= SIGN_IN_LIMITS.failuresPerIp) {
      return { kind: 'limited' as const };
    }

    const [user] = await tx
      .select({
        id: users.id, email: users.email, displayName: users.displayName, role: users.role, tenantId: users.tenantId,
        passwordHash: users.passwordHash, tenantName: tenants.name,
      })
      .from(users)
      .leftJoin(tenants, eq(tenants.id, users.tenantId))
      .where(eq(users.email, email));
    // same argon2 work whether or not the account exists
    const ok = await verifyPassword(user?.passwordHash ?? (await getDummyHash()), input.password);
    const success = ok && !!user;
    await tx.insert(loginAttempts).values({ emailHash, ip: input.ip, at: now, success });
    if (!success) return { kind: 'invalid' as const };
    const { passwordHash: _omit, ...profile } = user;
    return { kind: 'ok' as const, user: profile };
  });

  if (outcome.kind === 'limited') {
    signInTotal.inc({ result: 'rate_limited' });
    throw rateLimited(SIGN_IN_LIMITS.windowMs);
  }
  if (outcome.kind === 'invalid') {
    signInTotal.inc({ result: 'invalid' });
    throw invalidCredentials();
  }
  signInTotal.inc({ result: 'ok' });
  const session = await createSession(db, outcome.user.id, input.ttlHours, now);
  return { user: outcome.user, ...session };
}

export async function loadUserProfile(db: Db, userId: string): Promise<SignedInUser | null> {
  const [row] = await db
    .select({ id: users.id, email: users.email, displayName: users.displayName, role: users.role, tenantId: users.tenantId, tenantName: tenants.name })
    .from(users)
    .leftJoin(tenants, eq(tenants.id, users.tenantId))
    .where(eq(users.id, userId));
  return row ?? null;
}

/**
 * id → display name for the given users, limited to what the actor may see: its own tenant's users and
 * PIN staff (no tenant); cross-tenant roles see everyone. Unknown or foreign ids are simply absent.
 */
export async function userNames(db: Db, actor: Actor, ids: string[]): Promise<Record<string, string>> {
  if (ids.length === 0) return {};
  const scope = tenantScope(actor);
  const rows = await db
    .select({ id: users.id, displayName: users.displayName })
    .from(users)
    .where(and(inArray(users.id, ids), scope === null ? undefined : or(eq(users.tenantId, scope), isNull(users.tenantId))));
  return Object.fromEntries(rows.map((r) => [r.id, r.displayName]));
}
