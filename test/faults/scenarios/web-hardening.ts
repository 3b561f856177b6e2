import { randomUUID } from 'node:crypto';
import { DATA_DIR } from '../../../scripts/infra/index';
import { localProfileDataKey } from '../../../scripts/stack';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import superjson from 'superjson';
import { expect } from 'vitest';
import { insertUser, TEST_PASSWORD } from '../../fixtures/auth.fixtures';
import { SIGN_IN_LIMITS } from '../../../server/auth/sign-in';
import { createBookingCommand } from '../../../server/crm/commands/create-booking';
import { createDatabase } from '../../../server/platform/db';
import type { TestContext } from '../../harness/harness';
import { createContextFor } from '../../../server/trpc/context';
import { appRouter } from '../../../server/main/app-router';
import { figure } from '../helpers/figures';
import { startWebHost } from '../helpers/processes';
import { seedWorld, trpcHttp } from '../helpers/world';
import { commandContext } from '../../../server/platform/command-context';

/**
 * Session and web hardening of the API, through the real route handler (app/api/trpc/[trpc]/route.ts
 * in a web process of its own, NODE_ENV=production) and the real tRPC adapter:
 *  - the session cookie is HttpOnly, SameSite=Lax, Secure in production, and never in a response body;
 *  - CSRF: a mutation whose Origin is another site is refused (403) and changes nothing — also the
 *    opaque Origin "null" (sandboxed frames, some redirects) — while same-origin calls pass;
 *  - the sign-in rate limit answers 429 AUTH_RATE_LIMITED after failures of one account from one socket
 *    address (X-Forwarded-For is not believed without a configured proxy);
 *  - a 500 carries no internals (the SQL text and parameters of a failed query stay in the log);
 *  - a value PostgreSQL cannot store (a NUL character, a year beyond 9999) is a 400, not a 500.
 * Security headers of next.config.mjs need `next start`: e2e/hardening.spec.ts checks them in npm test.
 */
export async function webHardeningScenario(t: TestContext, opts: { label: string }): Promise<void> {
  const { db, sql } = t.database;
  const world = await seedWorld(t.database, 3);
  const pin = await insertUser(db, 'pin_manager', null);
  const booking = await db.transaction((tx) => createBookingCommand(tx, { dealId: world.dealIds[0]!, propertyObjectId: world.objectIds[0]!, programId: world.programId }, commandContext(pin.actor, randomUUID())));
  const web = await startWebHost(`web-hardening-${t.prefix}`, { DATABASE_URL: t.url, KAFKA_BROKERS: t.env.KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: t.prefix, NODE_ENV: 'production', PROFILE_DATA_KEY: localProfileDataKey(DATA_DIR) });
  const checks: string[] = [];
  try {
    const sameOrigin = { origin: web.url };
    // ---- cookie flags
    const signIn = await trpcHttp(web.url, 'auth.signIn', { email: pin.email, password: TEST_PASSWORD }, { headers: sameOrigin });
    expect(signIn.status).toBe(200);
    const cookie = signIn.setCookie.find((c) => c.startsWith('pin_session='))!;
    const flags = cookie.split(';').map((p) => p.trim().toLowerCase());
    expect(flags).toContain('httponly');
    expect(flags).toContain('samesite=lax');
    expect(flags).toContain('secure');
    expect(flags).toContain('path=/');
    const token = cookie.split(';')[0]!.split('=')[1]!;
    expect(signIn.text).not.toContain(token);
    checks.push('session cookie HttpOnly; SameSite=Lax; Secure (production); token not in the body');
    const session = cookie.split(';')[0]!;

    // ---- CSRF: cross-origin mutations refused, nothing written
    const cancel = (headers: Record<string, string>) =>
      trpcHttp(web.url, 'booking.cancel', { bookingId: booking.id, reason: 'csrf attempt' }, { cookie: session, headers });
    const before = await sql`SELECT status, version FROM crm.bookings WHERE id = ${booking.id}`;
    const evil = await cancel({ origin: 'https://evil.example' });
    const opaque = await cancel({ origin: 'null' });
    const sub = await cancel({ origin: `http://attacker.${new URL(web.url).hostname}.example` });
    expect(await sql`SELECT status, version FROM crm.bookings WHERE id = ${booking.id}`).toEqual(before);
    expect([evil.status, opaque.status, sub.status]).toEqual([403, 403, 403]);
    const evilSignIn = await trpcHttp(web.url, 'auth.signIn', { email: pin.email, password: TEST_PASSWORD }, { headers: { origin: 'https://evil.example' } });
    expect(evilSignIn.status).toBe(403);
    expect(evilSignIn.setCookie).toEqual([]);
    checks.push('cross-origin mutation (evil site, Origin "null", look-alike host) → 403, booking unchanged; cross-origin sign-in sets no cookie');
    const own = await cancel(sameOrigin);
    expect(own.status).toBe(200);
    checks.push('same-origin mutation → 200');

    // ---- login rate limit (an account of its own; the web host counts the socket address, 127.0.0.1,
    // whatever X-Forwarded-For says): progressive delay after 2 failures of one account from one address
    const victim = await insertUser(db, 'viewer', world.tenantId);
    const forged = () => ({ ...sameOrigin, 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 250)}` });
    const answers: number[] = [];
    for (let i = 0; i < SIGN_IN_LIMITS.delayAfterFailures; i++) {
      answers.push((await trpcHttp(web.url, 'auth.signIn', { email: victim.email, password: `wrong-${i}` }, { headers: forged() })).status);
    }
    const limited = await trpcHttp(web.url, 'auth.signIn', { email: victim.email, password: TEST_PASSWORD }, { headers: forged() });
    expect(answers).toEqual(Array(SIGN_IN_LIMITS.delayAfterFailures).fill(401));
    expect(limited.status).toBe(429);
    expect(limited.body.error?.json?.data?.domainCode).toBe('AUTH_RATE_LIMITED');
    expect(limited.setCookie).toEqual([]);
    const counted = await sql<Array<{ ip: string }>>`SELECT DISTINCT ip FROM auth.login_attempts`;
    expect(counted.map((r) => r.ip)).toEqual(['127.0.0.1']);
    checks.push(`login rate limit: ${SIGN_IN_LIMITS.delayAfterFailures} × 401, then 429 AUTH_RATE_LIMITED even with the right password; a forged X-Forwarded-For is not counted`);

    // ---- a 500 says nothing about the internals (in-process: the same adapter, a database without our
    // schemas, so the query fails with its SQL in the error); an unreachable database is a 503
    const callWith = async (database: ReturnType<typeof createDatabase>) => {
      const res = await fetchRequestHandler({
        endpoint: '/api/trpc',
        req: new Request(`http://localhost/api/trpc/booking.byId?input=${encodeURIComponent(JSON.stringify(superjson.serialize({ bookingId: booking.id })))}`),
        router: appRouter,
        createContext: () => createContextFor({ database, env: t.env, logger: t.logger }, pin.actor),
      });
      return { status: res.status, text: await res.text() };
    };
    const withoutSchemas = new URL(t.env.DATABASE_URL);
    withoutSchemas.pathname = '/postgres';
    const broken = createDatabase(withoutSchemas.toString(), { max: 1, applicationName: 'faults-broken' });
    const unreachable = createDatabase('postgres://nobody:secret@127.0.0.1:1/nothing', { max: 1, applicationName: 'faults-unreachable' });
    try {
      const failed = await callWith(broken);
      expect(failed.status).toBe(500);
      expect(JSON.parse(failed.text).error.json.message).toBe('Internal server error');
      expect(failed.text).not.toMatch(/select|from|crm\.|bookings|relation|127\.0\.0\.1/i);
      checks.push('a 500 carries "Internal server error" only (no SQL, parameters, hosts)');
      const down = await callWith(unreachable);
      expect(down.status).toBe(503);
      expect(JSON.parse(down.text).error.json.data).toMatchObject({ code: 'SERVICE_UNAVAILABLE', domainCode: 'DATABASE_UNAVAILABLE' });
      expect(down.text).not.toMatch(/secret|127\.0\.0\.1|ECONNREFUSED/i);
      checks.push('an unreachable database → 503 DATABASE_UNAVAILABLE (no hosts, no credentials)');
    } finally {
      await broken.close().catch(() => {});
      await unreachable.close().catch(() => {});
    }

    // ---- values PostgreSQL refuses are the request's fault: 400, nothing written
    const call = async (path: string, input: unknown, type: 'query' | 'mutation') => {
      const url = new URL(`http://localhost/api/trpc/${path}`);
      const body = JSON.stringify(superjson.serialize(input));
      if (type === 'query') url.searchParams.set('input', body);
      const res = await fetchRequestHandler({
        endpoint: '/api/trpc', router: appRouter,
        req: type === 'query' ? new Request(url) : new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
        createContext: () => createContextFor({ database: t.database, env: t.env, logger: t.logger }, pin.actor),
      });
      return { status: res.status, body: (await res.json()) as { error?: { json: { data: { domainCode: string } } } } };
    };
    const b2 = await db.transaction((tx) => createBookingCommand(tx, { dealId: world.dealIds[1]!, propertyObjectId: world.objectIds[1]!, programId: world.programId }, commandContext(pin.actor, randomUUID())));
    const nul = await call('booking.cancel', { bookingId: b2.id, reason: 'client\u0000changed mind' }, 'mutation');
    const year = await call('ops.dashboard.jobRuns', { job: 'outbox-relay', from: new Date('+010000-01-01T00:00:00Z') }, 'query');
    expect([nul.status, year.status]).toEqual([400, 400]);
    expect(nul.body.error?.json.data.domainCode).toBe('INVALID_INPUT_VALUE');
    // a date out of the range a console can hold is refused by the input schema, naming the field
    expect(year.body.error?.json.data.domainCode).toBe('VALIDATION_ERROR');
    expect((await sql`SELECT status FROM crm.bookings WHERE id = ${b2.id}`)[0]!.status).toBe('Reserved');
    checks.push('a NUL character in a reason → 400 INVALID_INPUT_VALUE / a year beyond 9999 → 400 VALIDATION_ERROR, nothing written');

    figure('web-hardening', `${opts.label}: ${checks.length} checks passed — ${checks.join('; ')}`, { checks });
  } finally {
    await web.stop();
  }
}
