/**
 * The security headers every answer of the web carries, whoever serves it: next.config.mjs `headers()`
 * for what Next.js answers, server/trpc/node-http.ts for the /api/trpc answers the web server gives
 * itself. Plain JavaScript so that next.config.mjs can import it as it is. The Content-Security-Policy
 * is per request (a nonce): server/auth/content-security-policy.ts.
 */
export const STATIC_SECURITY_HEADERS = Object.freeze([
  Object.freeze(['X-Content-Type-Options', 'nosniff']),
  Object.freeze(['Referrer-Policy', 'same-origin']),
  Object.freeze(['X-Frame-Options', 'DENY']),
]);
