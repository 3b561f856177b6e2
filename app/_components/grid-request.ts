import superjson from 'superjson';

/**
 * The chessboard's grid goes out on its own GET (not in a tRPC batch, see providers.tsx), so the page's
 * HTML can ask the browser to start it while the bundle still loads (`<link rel=preload as=fetch>`,
 * app/(console)/chessboard/page.tsx) and the client's fetch of the same URL is answered by that preload.
 * The URL must be byte for byte the one tRPC's httpLink builds (grid-request.test.ts holds the two together).
 */
export const TRPC_URL = '/api/trpc';
export const GRID_PROCEDURE = 'chessboard.grid';

export function gridRequestUrl(buildingId: string): string {
  return `${TRPC_URL}/${GRID_PROCEDURE}?input=${encodeURIComponent(JSON.stringify(superjson.serialize({ buildingId })))}`;
}
