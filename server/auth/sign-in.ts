import { createHash } from 'node:crypto';
import { and, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../platform/db';
import { AppError } from '../platform/errors';
import { counter } from '../platform/metrics';
import { loginAttempts, tenants, users } from './schema';
import { tenantScope, type Actor, type Role } from './actor';
import { createSession, hashPassword, verifyPassword } from './session';

/**
 * Brute-force limits (docs/security.md), all inside a sliding window and all keyed by the counted
 * client address (server/auth/client-ip.ts):
 * - per address, any accounts: `failuresPerAddress` failures, then refused until the window moves on
 *   (password spraying from one address);
 * - per account + address: from the `delayAfterFailures`-th failure on the next attempt waits
 *   2^(n-1) s (progressive delay), and after `failuresPerAccountAddress` failures that address is refused
 *   for that account until the window moves on. Nothing is counted per account alone, so nobody can
 *   lock the real user out from the addresses the attacker does not have (OWASP authentication cheat
 *   sheet: account lockout is a denial-of-service tool); a success from that address starts it afresh.
 */
export const SIGN_IN_LIMITS = {
  windowMs: 15 * 60_000,
  failuresPerAddress: 20,
  failuresPerAccountAddress: 5,
  delayAfterFailures: 2,
} as const;

const signInTotal = counter('auth_sign_in_total', 'Sign-in attempts by result', ['result'], { result: ['ok', 'invalid', 'rate_limited'] });

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

/** The progressive delay after `n` failures of one account from one address (0 below the threshold). */
export function progressiveDelayMs(n: number): number {
  return n < SIGN_IN_LIMITS.delayAfterFailures ? 0 : 1000 * 2 ** (n - 1);
}

/**
 * Verifies the credentials and opens a server-side session.
 *
 * The attempt is reserved before the password is checked: under an advisory lock of its address, one
 * short transaction counts the address's failures in the window and inserts the attempt as a failure,
 * and commits. Only then argon2 runs (no lock held), and a right password turns the row into a success.
 * So parallel or batched attempts from one address each take a slot of the limit before any of them is
 * verified, and a refused attempt is neither verified nor recorded (it cannot extend a refusal forever).
 */
export async function signIn(db: Db, input: SignInInput): Promise<{ user: SignedInUser; token: string; expiresAt: Date }> {
  const now = input.now ?? new Date();
  const email = normalizeEmail(input.email);
  const emailHash = emailHashOf(email);
  const windowStart = new Date(now.getTime() - SIGN_IN_LIMITS.windowMs);

  const reservation = await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${'auth.sign_in.address:' + input.ip}, 0))`);
    const [c] = await tx.execute<{ address_failures: number; account_failures: number; first_failure: Date | string | null; last_failure: Date | string | null }>(sql`
      WITH recent AS (
        SELECT email_hash, at, success FROM auth.login_attempts WHERE ip = ${input.ip} AND at > ${windowStart.toISOString()}::timestamptz
      ), account AS (
        SELECT at FROM recent
        WHERE email_hash = ${emailHash} AND NOT success
          AND at > COALESCE((SELECT max(at) FROM recent WHERE email_hash = ${emailHash} AND success), '-infinity')
      )
      SELECT (SELECT count(*) FROM recent WHERE NOT success)::int AS address_failures,
             (SELECT count(*) FROM account)::int AS account_failures,
             (SELECT min(at) FROM account) AS first_failure,
             (SELECT max(at) FROM account) AS last_failure`);
    const ms = (v: Date | string | null) => (v === null ? 0 : new Date(v).getTime());
    if (c.address_failures >= SIGN_IN_LIMITS.failuresPerAddress) return { kind: 'limited' as const, retryAfterMs: SIGN_IN_LIMITS.windowMs };
    if (c.account_failures >= SIGN_IN_LIMITS.failuresPerAccountAddress) {
      return { kind: 'limited' as const, retryAfterMs: ms(c.first_failure) + SIGN_IN_LIMITS.windowMs - now.getTime() };
    }
    const wait = ms(c.last_failure) + progressiveDelayMs(c.account_failures) - now.getTime();
    if (c.account_failures > 0 && wait > 0) return { kind: 'limited' as const, retryAfterMs: wait };
    const [row] = await tx.insert(loginAttempts).values({ emailHash, ip: input.ip, at: now, success: false }).returning({ id: loginAttempts.id });
    return { kind: 'reserved' as const, attemptId: row!.id };
  });
  if (reservation.kind === 'limited') {
    signInTotal.inc({ result: 'rate_limited' });
    throw rateLimited(Math.max(1000, reservation.retryAfterMs));
  }

  const [user] = await db
    .select({
      id: users.id, email: users.email, displayName: users.displayName, role: users.role, tenantId: users.tenantId,
      passwordHash: users.passwordHash, tenantName: tenants.name,
    })
    .from(users)
    .leftJoin(tenants, eq(tenants.id, users.tenantId))
    .where(eq(users.email, email));
  // same argon2 work whether or not the account exists
  const ok = await verifyPassword(user?.passwordHash ?? (await getDummyHash()), input.password);
  if (!ok || !user) {
    signInTotal.inc({ result: 'invalid' });
    throw invalidCredentials();
  }
  await db.update(loginAttempts).set({ success: true }).where(eq(loginAttempts.id, reservation.attemptId));
  signInTotal.inc({ result: 'ok' });
  const { passwordHash: _omit, ...profile } = user;
  const session = await createSession(db, profile.id, input.ttlHours, now);
  return { user: profile, ...session };
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
  // an investor (no tenant): PIN staff and itself — not the developers' people
  const scope = actor.role === 'investor' ? undefined : tenantScope(actor);
  const visible = scope === undefined ? or(isNull(users.tenantId), eq(users.id, actor.userId))
    : scope === null ? undefined : or(eq(users.tenantId, scope), isNull(users.tenantId));
  const rows = await db
    .select({ id: users.id, displayName: users.displayName })
    .from(users)
    .where(and(inArray(users.id, ids), visible));
  return Object.fromEntries(rows.map((r) => [r.id, r.displayName]));
}
