/**
 * CSRF guard of the state-changing routes (tRPC mutations, the no-JavaScript sign-in form): a request
 * whose Origin names another host is refused (SameSite=Lax already keeps the session cookie off
 * cross-site POSTs). A request without Origin is let through: browsers send it on every cross-origin POST.
 */
export function isCrossOrigin(req: Request): boolean {
  const origin = req.headers.get('origin');
  const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
  // an Origin that is not a URL (the opaque "null" of sandboxed frames and some redirects) is not ours either
  return Boolean(origin && host && originHost(origin) !== host);
}

function originHost(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}
