import { describe, expect, it } from 'vitest';
import { isBatchQuery, procedurePath, requestUrlParts } from './request-url';

describe('requestUrlParts', () => {
  it('cuts path and query as WHATWG URL does for the URLs the API sees', () => {
    const urls = [
      'http://127.0.0.1:3000/api/trpc/booking.create',
      'http://127.0.0.1:3000/api/trpc/auth.me,chessboard.projects?batch=1&input=%7B%7D',
      'https://example.com/api/trpc/a?',
      'https://example.com/api/trpc/a?x=1#frag',
      'https://example.com/api/trpc/a#frag?not-a-query',
      'http://host',
      'http://host?q=1',
      'http://user@host:1/p/q?x=http://y/z',
    ];
    for (const u of urls) {
      const url = new URL(u);
      expect(requestUrlParts(u), u).toEqual({ pathname: url.pathname, query: url.search.slice(1) });
    }
  });

  it('reads a node:http request target (path only)', () => {
    expect(requestUrlParts('/api/trpc/booking.confirm')).toEqual({ pathname: '/api/trpc/booking.confirm', query: '' });
    expect(requestUrlParts('/api/trpc/a,b?batch=1&input=http://x')).toEqual({ pathname: '/api/trpc/a,b', query: 'batch=1&input=http://x' });
  });

  it('a batch is `batch=1` as URLSearchParams reads it', () => {
    expect(isBatchQuery('batch=1')).toBe(true);
    expect(isBatchQuery('input=%7B%7D&batch=%31')).toBe(true);
    expect(isBatchQuery('batch=0')).toBe(false);
    expect(isBatchQuery('notbatch=1')).toBe(false);
    expect(isBatchQuery('')).toBe(false);
  });

  it('procedurePath: the procedures named after /api/trpc/', () => {
    expect(procedurePath('/api/trpc/booking.create')).toBe('booking.create');
    expect(procedurePath('/api/trpc/a,b')).toBe('a,b');
    expect(procedurePath('/api/trpc/')).toBe('');
    expect(procedurePath('/api/trpc')).toBe('');
  });
});
