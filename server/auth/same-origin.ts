/**
 * CSRF guard of the state-changing routes (tRPC mutations, the no-JavaScript sign-in form): a request
 * whose Origin is not ours is refused (SameSite=Lax already keeps the session cookie off cross-site
 * POSTs). A request without Origin is let through: browsers send it on every cross-origin POST.
 *
 * What "ours" is (docs/security.md):
 *  - PUBLIC_ORIGIN set (comma-separated origins, e.g. `https://console.pin.example`): exactly those, and
 *    nothing a request says about its host is read;
 *  - otherwise the request's own Host. X-Forwarded-Host / X-Forwarded-Proto are believed only with
 *    TRUST_PROXY=1 (a proxy in front that overwrites them): without a proxy any client writes them, and
 *    `Origin: http://evil.example` + `X-Forwarded-Host: evil.example` must not pass.
 */
export interface OriginSettings {
  /** '1': a proxy in front overwrites X-Forwarded-Host / -Proto, so they are believed */
  TRUST_PROXY: '0' | '1';
  /** normalised origins (scheme://host[:port]); empty = derive from the request */
  PUBLIC_ORIGIN: readonly string[];
}

export function isCrossOrigin(req: { headers: Pick<Headers, 'get'> }, settings: OriginSettings): boolean {
  const origin = req.headers.get('origin');
  if (!origin) return false;
  // an Origin that is not a URL (the opaque "null" of sandboxed frames and some redirects) is not ours either
  const parsed = parseOrigin(origin);
  if (!parsed) return true;
  if (settings.PUBLIC_ORIGIN.length > 0) return !settings.PUBLIC_ORIGIN.includes(parsed.origin);
  const forwardedHost = settings.TRUST_PROXY === '1' ? firstValue(req.headers.get('x-forwarded-host')) : null;
  const host = forwardedHost ?? req.headers.get('host');
  if (!host || parsed.host !== host.toLowerCase()) return true;
  // the scheme is known only from a proxy that says how it was reached
  const forwardedProto = settings.TRUST_PROXY === '1' ? firstValue(req.headers.get('x-forwarded-proto')) : null;
  return forwardedProto !== null && `${forwardedProto.toLowerCase()}:` !== parsed.protocol;
}

/** The first entry of a header a chain of proxies may have appended to ("a, b"): the one the client reached. */
function firstValue(header: string | null): string | null {
  const v = header?.split(',')[0]?.trim();
  return v ? v : null;
}

function parseOrigin(origin: string): URL | null {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}
