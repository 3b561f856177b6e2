/**
 * The 405 of a route for the methods it does not serve. Next.js answers them by itself, but without
 * Cache-Control: a route exports this for them so that every answer of the API is `no-store`.
 */
export function methodNotAllowed(allow: string): () => Response {
  return () => new Response('Method not allowed', { status: 405, headers: { allow, 'cache-control': 'no-store' } });
}
