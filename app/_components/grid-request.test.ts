import { createTRPCClient, httpLink } from '@trpc/client';
import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import type { AppRouter } from '@/server/trpc/root';
import { GRID_PROCEDURE, gridRequestUrl, TRPC_URL } from './grid-request';

describe('gridRequestUrl (the URL the chessboard page preloads)', () => {
  it('is exactly the URL tRPC\'s httpLink requests for chessboard.grid, so the preload answers the fetch', async () => {
    const buildingId = '602a8959-343b-5ee6-83f4-ffc576ad6e94';
    const requested: string[] = [];
    const client = createTRPCClient<AppRouter>({
      links: [httpLink({
        url: TRPC_URL,
        transformer: superjson,
        fetch: async (url) => {
          requested.push(String(url));
          return new Response(JSON.stringify({ result: { data: superjson.serialize({ cells: [] }) } }), { headers: { 'content-type': 'application/json' } });
        },
      })],
    });
    await client.chessboard.grid.query({ buildingId });
    expect(GRID_PROCEDURE).toBe('chessboard.grid');
    expect(requested).toEqual([gridRequestUrl(buildingId)]);
    expect(gridRequestUrl(buildingId)).toBe(`/api/trpc/chessboard.grid?input=${encodeURIComponent(`{"json":{"buildingId":"${buildingId}"}}`)}`);
  });
});
