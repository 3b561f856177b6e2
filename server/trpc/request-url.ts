/**
 * The path and query of a request URL, cut by hand: the API reads them on every request (batch limit,
 * request metric) and `new URL()` per request is a visible cost in the web's profile. The input is
 * either absolute (`http://host/api/trpc/x?batch=1`, a Request's url, already normalised by WHATWG
 * URL) or the request target of node:http (`/api/trpc/x?batch=1`); a fragment is dropped.
 */
export interface RequestUrlParts {
  /** `/api/trpc/booking.create` — `/` when the URL has no path */
  pathname: string;
  /** what follows `?`, without it; '' when there is none */
  query: string;
}

export function requestUrlParts(url: string): RequestUrlParts {
  let start = 0;
  const scheme = url.indexOf('://');
  // an absolute URL: the path starts at the first '/' after the authority (a '?' or '#' may end it first)
  if (scheme >= 0 && scheme < url.search(/[/?#]/)) {
    start = url.length;
    for (let i = scheme + 3; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c === 0x2f || c === 0x3f || c === 0x23) { // '/', '?', '#' end the authority
        start = i;
        break;
      }
    }
  }
  let end = url.indexOf('#', start);
  if (end < 0) end = url.length;
  const q = url.indexOf('?', start);
  const pathEnd = q >= 0 && q < end ? q : end;
  const pathname = url.slice(start, pathEnd) || '/';
  const query = q >= 0 && q < end ? url.slice(q + 1, end) : '';
  return { pathname, query };
}

/** `?batch=1` as tRPC reads it (URLSearchParams: `batch=%31` is a batch too); parsed only when the query names it. */
export function isBatchQuery(query: string): boolean {
  return query.includes('batch') && new URLSearchParams(query).get('batch') === '1';
}

/** The procedures a tRPC pathname names, as one text: `/api/trpc/a,b` → `a,b` ('' when it names none). */
export function procedurePath(pathname: string): string {
  return pathname.replace(/^\/api\/trpc\/?/, '');
}
