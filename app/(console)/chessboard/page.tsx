import { cookies } from 'next/headers';
import { Suspense } from 'react';
import { resolveSession, SESSION_COOKIE } from '@/server/auth/session';
import { createContextFor } from '@/server/trpc/context';
import { createCaller } from '@/server/main/app-router';
import { getServices } from '@/server/main/web-services';
import { ChessboardScreen, type InitialBoard } from '../../_components/chessboard-screen';
import { packGrid } from '../../_components/grid-pack';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The board of the URL (or the first project's first building) is read here, through the same
 * procedures the browser calls (their role and tenant checks), and rendered into the first HTML: the
 * board is readable before any script runs, and hydration does not ask for it again
 * (docs/decisions/0020-grid-rendered-in-the-browser.md).
 */
async function readBoard(params: Record<string, string | string[] | undefined>): Promise<InitialBoard | null> {
  const services = getServices();
  const session = await resolveSession(services.database.db, (await cookies()).get(SESSION_COOKIE)?.value);
  if (!session) return null;
  const caller = createCaller(createContextFor(services, session.actor)).chessboard;
  const wanted = (v: string | string[] | undefined) => (typeof v === 'string' ? v : null);
  const projects = await caller.projects();
  const projectId = wanted(params.project) ?? projects[0]?.id ?? null;
  if (!projectId || !UUID.test(projectId)) return { projects, projectId, buildings: null, buildingId: null, grid: null };
  // a failed read (a project or building the user may not see, a malformed id) is left to the
  // browser's own query, which shows the error as it always has
  const buildings = await caller.buildings({ projectId }).catch(() => null);
  const buildingId = wanted(params.building) ?? buildings?.[0]?.id ?? null;
  const grid = buildingId && UUID.test(buildingId) ? await caller.grid({ buildingId }).catch(() => null) : null;
  return { projects, projectId, buildings, buildingId, grid: grid && packGrid(grid) };
}

export default async function ChessboardPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const initial = await readBoard(await searchParams).catch(() => null);
  return (
    <Suspense>
      <ChessboardScreen initial={initial} />
    </Suspense>
  );
}
