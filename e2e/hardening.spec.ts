import { randomUUID } from 'node:crypto';
import { expect, request as playwrightRequest, test } from '@playwright/test';
import { STATIC_SECURITY_HEADERS } from '../server/platform/security-headers.mjs';
import { PASSWORD, signIn, USERS } from './helpers';

/**
 * Session and web hardening against the running `next start` (NODE_ENV=production), part of the fault
 * and abuse suite (the "Fault and abuse suite" section of docs/operations.md):
 * security headers from next.config.mjs on pages and API routes, the session cookie's flags, CSRF
 * refusal of cross-origin mutations (also Origin "null"), and the sign-in rate limit. The rate-limit
 * test uses an unknown account and an address of its own (X-Forwarded-For), so no other test is limited.
 */

const baseURL = () => test.info().project.use.baseURL!;

test.describe('web hardening', () => {
  test('security headers on pages and API routes: CSP with frame-ancestors none, nosniff, DENY, referrer policy, no x-powered-by', async ({ request }) => {
    for (const path of ['/login', '/api/health', '/api/trpc/auth.me']) {
      const res = await request.get(path);
      const h = res.headers();
      const csp = h['content-security-policy'] ?? '';
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("base-uri 'self'");
      expect(csp, path).toContain("form-action 'self'");
      expect(csp, `${path}: no unsafe-eval in production`).not.toContain('unsafe-eval');
      expect(h['x-content-type-options'], path).toBe('nosniff');
      expect(h['x-frame-options'], path).toBe('DENY');
      expect(h['referrer-policy'], path).toBe('same-origin');
      // Next.js (next.config.mjs) and the web server's own tRPC answers serve the one definition
      for (const [name, value] of STATIC_SECURITY_HEADERS) expect(h[name.toLowerCase()], `${path} ${name}`).toBe(value);
      expect(h['x-powered-by'], path).toBeUndefined();
    }
  });

  test('the session cookie is HttpOnly, SameSite=Lax and Secure (production), and scripts cannot read it', async ({ page, context }) => {
    await signIn(page, USERS.viewer);
    const session = (await context.cookies()).find((c) => c.name === 'pin_session');
    expect(session).toBeTruthy();
    expect(session!.httpOnly).toBe(true);
    expect(session!.sameSite).toBe('Lax');
    expect(session!.secure).toBe(true);
    expect(await page.evaluate(() => document.cookie)).not.toContain('pin_session');
  });

  test('CSRF: a cross-origin mutation is refused (403) — another site, the opaque Origin "null" — and a same-origin one passes', async () => {
    const api = await playwrightRequest.newContext({ baseURL: baseURL(), extraHTTPHeaders: { origin: baseURL() } });
    const signedIn = await api.post('/api/trpc/auth.signIn', { data: { json: { email: USERS.viewer, password: PASSWORD } } });
    expect(signedIn.status()).toBe(200);
    for (const origin of ['https://evil.example', 'null']) {
      const res = await api.post('/api/trpc/auth.signOut', { data: { json: null }, headers: { origin } });
      expect(res.status(), origin).toBe(403);
      const form = await api.post('/api/auth/sign-in', { form: { email: USERS.viewer, password: PASSWORD }, headers: { origin }, maxRedirects: 0 });
      expect(form.status(), `no-JS sign-in form, ${origin}`).toBe(403);
    }
    // the session survived the refused cross-origin sign-out
    expect((await api.get('/api/trpc/auth.me')).status()).toBe(200);
    expect((await api.post('/api/trpc/auth.signOut', { data: { json: null } })).status()).toBe(200);
    expect((await api.get('/api/trpc/auth.me')).status()).toBe(401);
    await api.dispose();
  });

  test('the sign-in limit: 429 after failures of one account from one address; a forged X-Forwarded-For changes nothing', async () => {
    test.setTimeout(90_000);
    const email = `nobody-${randomUUID().slice(0, 8)}@pin.local`;
    // a new invented address per attempt: the web counts the socket's address, not this header
    let forged = 0;
    const attempt = async () => {
      const ctx = await playwrightRequest.newContext({ baseURL: baseURL(), extraHTTPHeaders: { origin: baseURL(), 'x-forwarded-for': `203.0.113.${++forged % 250}` } });
      const status = (await ctx.post('/api/trpc/auth.signIn', { data: { json: { email, password: `wrong-${forged}` } } })).status();
      await ctx.dispose();
      return status;
    };
    // five failures: the progressive delay (2, 4, 8 s) answers 429 in between — such an attempt is not
    // counted — so each is retried until it is checked (401)
    for (let i = 0; i < 5; i++) await expect.poll(attempt, { timeout: 30_000, intervals: [500] }).toBe(401);
    // then this address is refused for this account until the window moves on, whatever the timing
    expect(await attempt()).toBe(429);
    const api = await playwrightRequest.newContext({ baseURL: baseURL(), extraHTTPHeaders: { origin: baseURL() } });
    const limited = await api.post('/api/trpc/auth.signIn', { data: { json: { email, password: 'whatever' } } });
    expect((await limited.json()).error.json.data.domainCode).toBe('AUTH_RATE_LIMITED');
    await api.dispose();
  });

  test('CSP: a fresh nonce per request, strict-dynamic, no unsafe-inline script; the login page and the console run hydrated without a CSP violation', async ({ page, request }) => {
    test.setTimeout(120_000);
    const scriptSrc = async (path: string) => {
      const csp = (await request.get(path)).headers()['content-security-policy'] ?? '';
      return csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src ')) ?? '';
    };
    const nonceOf = (directive: string) => /'nonce-([A-Za-z0-9+/=]+)'/.exec(directive)?.[1];
    const policies = [await scriptSrc('/login'), await scriptSrc('/login'), await scriptSrc('/api/health')];
    for (const d of policies) {
      expect(nonceOf(d), d).toBeTruthy();
      expect(d).toContain("'strict-dynamic'");
      expect(d).not.toContain("'unsafe-inline'");
      expect(d).not.toContain('unsafe-eval');
    }
    expect(new Set(policies.map(nonceOf)).size, 'a new nonce on every request').toBe(policies.length);

    // every violation the browser reports: the console message and the DOM event (an init script runs whatever the CSP)
    const violations: string[] = [];
    page.on('console', (m) => { if (/content security policy/i.test(m.text())) violations.push(m.text()); });
    await page.exposeFunction('__pinCspViolation', (v: string) => violations.push(v));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        (window as unknown as { __pinCspViolation(v: string): void }).__pinCspViolation(`${e.violatedDirective} ${e.blockedURI}`);
      });
    });
    // the login page's scripts all carry the nonce of its own response
    const login = await page.goto('/login');
    const pageNonce = nonceOf((login!.headers()['content-security-policy'] ?? '').split(';').find((d) => d.includes('script-src')) ?? '');
    expect(pageNonce).toBeTruthy();
    const scriptNonces = await page.evaluate(() => [...document.querySelectorAll('script')].map((s) => s.nonce));
    expect(scriptNonces.length).toBeGreaterThan(0);
    expect(scriptNonces.filter((n) => n !== pageNonce)).toEqual([]);
    // hydrated: the form signs in through auth.signIn (JavaScript), not the no-JavaScript form post
    const viaJavaScript = page.waitForRequest((r) => r.method() === 'POST' && r.url().includes('/api/trpc/auth.signIn'));
    await signIn(page, USERS.viewer);
    await viaJavaScript;
    // the console works: its pages render, and the chessboard's live feed (a script-opened EventSource) connects
    await page.goto('/bookings');
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
    await page.goto('/chessboard');
    await expect(page.getByTestId('live-state')).toHaveClass(/live-live/, { timeout: 30_000 });
    expect(violations).toEqual([]);
  });

  test('Cache-Control: no-store on every API answer with user data: /api/trpc, /api/events, /api/auth/sign-in', async () => {
    const api = await playwrightRequest.newContext({ baseURL: baseURL(), extraHTTPHeaders: { origin: baseURL() } });
    const form = await api.post('/api/auth/sign-in', { form: { email: USERS.viewer, password: PASSWORD }, maxRedirects: 0 });
    expect(form.status()).toBe(303);
    expect(form.headers()['cache-control']).toBe('no-store');
    for (const path of ['/api/trpc/auth.me', '/api/trpc/chessboard.projects']) {
      const res = await api.get(path);
      expect(res.status(), path).toBe(200);
      expect(res.headers()['cache-control'], path).toBe('no-store');
    }
    // the event stream answers its headers at once; the body is an endless stream, so only the head is read
    const events = await fetch(`${baseURL()}/api/events`, { headers: { cookie: (await api.storageState()).cookies.map((c) => `${c.name}=${c.value}`).join('; ') } });
    expect(events.status).toBe(200);
    expect(events.headers.get('cache-control')).toMatch(/^no-store\b/);
    await events.body?.cancel();
    const anonymous = await fetch(`${baseURL()}/api/events`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('cache-control')).toBe('no-store');
    await api.dispose();
  });
});
