import { NextResponse, type NextRequest } from 'next/server';

import { contentSecurityPolicy } from './server/auth/content-security-policy';

// the policy itself lives in server/auth/content-security-policy.ts: server/main/web-server.ts sets it on
// the /api/trpc answers it serves without Next.js, and must not load next/server before Next starts
export { contentSecurityPolicy };

export function proxy(request: NextRequest): NextResponse {
  // 128 random bits, base64 (the nonce must be unguessable and differ on every request)
  const nonce = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV === 'production');
  const headers = new Headers(request.headers);
  headers.set('content-security-policy', csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set('content-security-policy', csp);
  return response;
}

export const config = {
  // every page and API answer; the hashed static files need no policy
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
