/**
 * The chessboard's grid goes out on its own GET, not in a tRPC batch (providers.tsx): a live update's
 * re-read of the board must not wait for the slowest query of a batch. The first read is the server's,
 * in the page's HTML (app/(console)/chessboard/page.tsx).
 */
export const TRPC_URL = '/api/trpc';
export const GRID_PROCEDURE = 'chessboard.grid';
