import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clientIp, markPeerAddressStamped, PEER_ADDRESS_HEADER, requestAddress, stampPeerAddress } from './client-ip';

afterEach(() => markPeerAddressStamped(false));

describe('clientIp: behind proxies the limit counts the address our own proxies wrote, not what the client sent', () => {
  it('one appending proxy: the right-most entry, whatever the client put before it', () => {
    expect(clientIp('203.0.113.7', 1)).toBe('203.0.113.7');
    expect(clientIp('198.51.100.1, 203.0.113.7', 1)).toBe('203.0.113.7');
    expect(clientIp('1.1.1.1, 2.2.2.2, 203.0.113.7', 1)).toBe('203.0.113.7');
  });
  it('two proxies: the second entry from the right', () => {
    expect(clientIp('9.9.9.9, 203.0.113.7, 10.0.0.2', 2)).toBe('203.0.113.7');
    expect(clientIp('203.0.113.7', 2)).toBe('203.0.113.7'); // fewer entries than hops: the left-most there is
  });
  it('IPv6, a missing header, junk', () => {
    expect(clientIp('2001:db8::1', 1)).toBe('2001:db8::1');
    expect(clientIp(null, 1)).toBe('unknown');
    expect(clientIp(' , ', 1)).toBe('unknown');
    expect(clientIp('1.2.3.4, <script>', 1)).toBe('invalid');
    expect(clientIp(`1.2.3.4, ${'9'.repeat(100)}`, 1)).toBe('invalid');
  });
});

describe('requestAddress without a proxy (TRUSTED_PROXY_HOPS=0, the default)', () => {
  const headers = (h: Record<string, string>) => new Headers(h);

  it('never reads X-Forwarded-For', () => {
    markPeerAddressStamped();
    expect(requestAddress(headers({ 'x-forwarded-for': '198.51.100.9', [PEER_ADDRESS_HEADER]: '203.0.113.5' }), 0)).toBe('203.0.113.5');
    expect(requestAddress(headers({ 'x-forwarded-for': '198.51.100.9' }), 0)).toBe('unknown');
  });

  it('believes the peer header only in a process whose server writes it; otherwise every client is "unknown"', () => {
    expect(requestAddress(headers({ [PEER_ADDRESS_HEADER]: '203.0.113.5', 'x-forwarded-for': '198.51.100.9' }), 0)).toBe('unknown');
    markPeerAddressStamped();
    expect(requestAddress(headers({ [PEER_ADDRESS_HEADER]: '::ffff:203.0.113.5' }), 0)).toBe('203.0.113.5');
  });

  it('the web server overwrites a client-sent peer header with the socket address', async () => {
    const seen: Array<string | string[] | undefined> = [];
    const raw: string[][] = [];
    const server = http.createServer((req, res) => {
      stampPeerAddress(req);
      seen.push(req.headers[PEER_ADDRESS_HEADER]);
      raw.push(req.rawHeaders.filter((_, i) => i % 2 === 0 && req.rawHeaders[i]!.toLowerCase() === PEER_ADDRESS_HEADER));
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { [PEER_ADDRESS_HEADER]: '198.51.100.66', 'x-forwarded-for': '198.51.100.67' } });
      expect(await res.text()).toBe('ok');
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect(seen).toEqual(['127.0.0.1']);
    expect(raw).toEqual([[PEER_ADDRESS_HEADER]]);
  });
});
