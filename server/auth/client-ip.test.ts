import { describe, expect, it } from 'vitest';
import { clientIp } from './client-ip';

describe('clientIp: the sign-in limit counts the address our own proxies wrote, not what the client sent', () => {
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
    expect(clientIp(null, 1)).toBe('127.0.0.1');
    expect(clientIp(' , ', 1)).toBe('127.0.0.1');
    expect(clientIp('1.2.3.4, <script>', 1)).toBe('invalid');
    expect(clientIp(`1.2.3.4, ${'9'.repeat(100)}`, 1)).toBe('invalid');
  });
});
