/**
 * Content-Security-Policy with a fresh nonce per request (Next.js Proxy, formerly middleware). Next.js
 * reads the nonce from the request's CSP header while it renders and puts it on its own scripts (the
 * framework, the page's bundles, the inline flight data); `'strict-dynamic'` lets those load the
 * chunks they import. No inline script without the nonce runs: no `'unsafe-inline'` for scripts, and
 * `'unsafe-eval'` only outside production (React's dev tooling). Pages must be rendered per request to
 * carry the nonce: the root layout is dynamic (app/layout.tsx). The other security headers are static
 * (next.config.mjs).
 */
export function contentSecurityPolicy(nonce: string, production: boolean): string {
  return `${BEFORE_SCRIPTS}; script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${production ? '' : " 'unsafe-eval'"}; ${AFTER_SCRIPTS}`;
}

// the fixed directives, joined once (the policy is built on every answer)
const BEFORE_SCRIPTS = "default-src 'self'";
const AFTER_SCRIPTS = [
  // styles keep 'unsafe-inline': React's style attributes; scripts are what an injection would run
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');
