import { getServices } from '@/server/main/web-services';
import { sessionCookie } from '@/server/auth/session';
import { signIn } from '@/server/auth/sign-in';
import { isAppError } from '@/server/platform/errors';
import { isCrossOrigin } from '@/server/auth/same-origin';
import { requestAddress } from '@/server/auth/client-ip';
import { readBodyCapped } from '@/server/trpc/request-limits';
import { methodNotAllowed } from '@/server/platform/method-not-allowed';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * No-JavaScript fallback of the sign-in form (the form posts here until the page is hydrated; with
 * JavaScript it uses auth.signIn). Same rules: rate limits, same answer for unknown e-mail and wrong
 * password. Credentials travel only in the POST body, never in a URL.
 */
export async function POST(req: Request): Promise<Response> {
  const services = getServices();
  // answers about a session are never stored by a cache
  const noStore = { 'cache-control': 'no-store' };
  if (isCrossOrigin(req, services.env)) return new Response('Cross-origin request refused', { status: 403, headers: noStore });
  const back = (path: string, cookie?: string) =>
    new Response(null, { status: 303, headers: { ...noStore, location: path, ...(cookie ? { 'set-cookie': cookie } : {}) } });
  // the form is two short fields: a body over API_MAX_BODY_BYTES is refused before it is parsed
  const body = await readBodyCapped(req, services.env.API_MAX_BODY_BYTES);
  if (body === null) return new Response('Request body too large', { status: 413, headers: noStore });
  const form = await new Response(body, { headers: { 'content-type': req.headers.get('content-type') ?? '' } }).formData().catch(() => null);
  const email = String(form?.get('email') ?? '').trim();
  const password = String(form?.get('password') ?? '');
  if (!email || !password || email.length > 254 || password.length > 200) return back('/login?error=VALIDATION_ERROR');
  try {
    const { token, expiresAt } = await signIn(services.database.db, {
      email,
      password,
      ip: requestAddress(req.headers, services.env.TRUSTED_PROXY_HOPS),
      ttlHours: services.env.SESSION_TTL_HOURS,
    });
    return back('/chessboard', sessionCookie(token, expiresAt, services.env.NODE_ENV === 'production'));
  } catch (e) {
    if (isAppError(e)) return back(`/login?error=${encodeURIComponent(e.code)}`);
    services.logger.error({ err: { message: (e as Error).message } }, 'sign-in fallback failed');
    return back('/login?error=INTERNAL');
  }
}

// the form is posted; anything else is a 405 that no cache keeps
export const GET = methodNotAllowed('POST');
export const PUT = GET;
export const PATCH = GET;
export const DELETE = GET;
