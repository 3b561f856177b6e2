/**
 * How many live streams (app/api/events) each session holds open in this web process. One session may
 * keep at most LIVE_STREAMS_PER_SESSION: one per open console tab is far below it, and a script that
 * opens streams without end is refused (429) instead of holding sockets, timers and fan-out work. The new
 * stream is the one refused — never an open one closed: closing the oldest would make two pages that
 * reconnect by themselves (EventSource) knock each other out in turn.
 */
const OPEN = Symbol.for('pin.web.live-streams-per-session');
const counts = (): Map<string, number> => {
  const g = globalThis as Record<symbol, Map<string, number> | undefined>;
  return (g[OPEN] ??= new Map());
};

/** A slot for one more stream of `sessionId`, or null at the cap. The returned release is idempotent. */
export function claimLiveStream(sessionId: string, max: number): (() => void) | null {
  const open = counts();
  const n = open.get(sessionId) ?? 0;
  if (n >= max) return null;
  open.set(sessionId, n + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (open.get(sessionId) ?? 1) - 1;
    if (left <= 0) open.delete(sessionId);
    else open.set(sessionId, left);
  };
}

/** Streams `sessionId` holds open now (tests, metrics). */
export const openLiveStreams = (sessionId: string): number => counts().get(sessionId) ?? 0;

/** Seconds a refused client is told to wait: about the time a closed tab takes to be noticed. */
export const LIVE_STREAM_RETRY_AFTER_S = 15;
