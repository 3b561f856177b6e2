import { Suspense } from 'react';
import { preload } from 'react-dom';
import { ChessboardScreen } from '../../_components/chessboard-screen';
import { gridRequestUrl } from '../../_components/grid-request';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default async function ChessboardPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  // a board opened by its URL: the browser starts the grid's request from the HTML's head, while the
  // bundle loads and hydrates, instead of after it (the client's fetch of the same URL takes that answer;
  // bench chessboard-grid "grid data requested"). A malformed id is left to the query's own error.
  const { building } = await searchParams;
  if (typeof building === 'string' && UUID.test(building)) {
    preload(gridRequestUrl(building), { as: 'fetch', crossOrigin: 'anonymous', fetchPriority: 'high' });
  }
  return (
    <Suspense>
      <ChessboardScreen />
    </Suspense>
  );
}
