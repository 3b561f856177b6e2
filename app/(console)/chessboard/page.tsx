import { Suspense } from 'react';
import { ChessboardScreen } from '../../_components/chessboard-screen';

export default function ChessboardPage() {
  return (
    <Suspense>
      <ChessboardScreen />
    </Suspense>
  );
}
