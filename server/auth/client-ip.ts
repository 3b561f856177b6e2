/**
 * The address the per-IP sign-in limit counts. X-Forwarded-For is a list each proxy appends to, so only
 * its right end was written by machines we run: behind `hops` appending proxies the client is the entry
 * `hops` places from the right (nginx `$proxy_add_x_forwarded_for`; a proxy that overwrites the header
 * leaves one entry, which is then the answer). Everything to the left of it came from the client and a
 * forger would fill it with a new address per attempt — reading the first entry made the limit useless.
 * `next start` without a proxy sets the header to the peer's address only when the request has none.
 */
export function clientIp(forwardedFor: string | null | undefined, hops: number): string {
  const entries = (forwardedFor ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  if (entries.length === 0) return '127.0.0.1';
  const entry = entries[Math.max(0, entries.length - hops)]!;
  // an address is at most 45 characters (IPv6 with an IPv4 tail); anything else is not an address
  return entry.length <= 45 && /^[0-9A-Fa-f:.]+$/.test(entry) ? entry : 'invalid';
}
