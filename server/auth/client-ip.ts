import type { IncomingMessage } from 'node:http';

/**
 * The address the sign-in limits count.
 *
 * Without a proxy (TRUSTED_PROXY_HOPS=0, the default) it is the TCP peer of the request. Next's route
 * handlers do not see the socket, and `next start` copies a client-sent X-Forwarded-For as it is (it
 * only fills the header when the request has none), so the web is served by our own server
 * (server/main/web-server.ts): it overwrites PEER_ADDRESS_HEADER on every request with the socket's
 * address and marks the process, and only then is the header believed. Under a plain `next start`
 * the address is unknown and every client is counted as `unknown` (fail closed: one shared bucket,
 * never an address a client chose); X-Forwarded-For is not read at all.
 *
 * Behind `hops` reverse proxies that append to X-Forwarded-For (nginx `$proxy_add_x_forwarded_for`)
 * the client is the entry `hops` places from the right: everything further left was written by the
 * client and a forger fills it with a new address per attempt.
 */
export const PEER_ADDRESS_HEADER = 'x-pin-peer-address';
const STAMPED = Symbol.for('pin.web.peer-address-stamped');

/** For the web server: every request carries its socket's address, whatever the client sent in this header. */
export function stampPeerAddress(req: IncomingMessage): void {
  req.headers[PEER_ADDRESS_HEADER] = req.socket.remoteAddress ?? 'unknown';
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i]!.toLowerCase() === PEER_ADDRESS_HEADER) raw.splice(i, 2);
  raw.push(PEER_ADDRESS_HEADER, req.headers[PEER_ADDRESS_HEADER] as string);
}

/** The web server calls this once: from now on PEER_ADDRESS_HEADER of a request was written by us. */
export function markPeerAddressStamped(on = true): void {
  (globalThis as Record<symbol, unknown>)[STAMPED] = on;
}

export const peerAddressStamped = (): boolean => (globalThis as Record<symbol, unknown>)[STAMPED] === true;

/** The counted address of a request (see above). */
export function requestAddress(headers: Pick<Headers, 'get'>, trustedProxyHops: number): string {
  if (trustedProxyHops > 0) return clientIp(headers.get('x-forwarded-for'), trustedProxyHops);
  if (!peerAddressStamped()) return 'unknown';
  return normaliseAddress(headers.get(PEER_ADDRESS_HEADER) ?? '');
}

function normaliseAddress(entry: string): string {
  const a = entry.trim().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (!a) return 'unknown';
  // an address is at most 45 characters (IPv6 with an IPv4 tail); anything else is not an address
  return a.length <= 45 && /^[0-9A-Fa-f:.]+$/.test(a) ? a : 'invalid';
}

/** The entry of X-Forwarded-For that `hops` appending proxies vouch for (the right end is theirs). */
export function clientIp(forwardedFor: string | null | undefined, hops: number): string {
  const entries = (forwardedFor ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  if (entries.length === 0) return 'unknown';
  return normaliseAddress(entries[Math.max(0, entries.length - hops)]!);
}
