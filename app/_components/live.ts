'use client';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTRPC } from './trpc';

export type LiveState = 'connecting' | 'live' | 'offline';

/**
 * Subscribes to /api/events (SSE). On a change of the watched building's grid it invalidates the
 * chessboard queries (the grid is re-read in one query; react-query keeps the old data on screen
 * meanwhile, so nothing jumps); crm changes invalidate booking views. EventSource reconnects by
 * itself after network errors; after an HTTP error (closed stream) we reconnect with backoff, and
 * every (re)connect refetches, because events may have been missed while disconnected.
 */
export function useLiveEvents(buildingId: string | null | undefined): LiveState {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [state, setState] = useState<LiveState>('connecting');

  useEffect(() => {
    let source: EventSource | null = null;
    let retry: ReturnType<typeof setTimeout> | null = null;
    let attempts = 0;
    let connectedOnce = false;
    let disposed = false;

    const refreshChessboard = () => queryClient.invalidateQueries(trpc.chessboard.pathFilter());
    const refreshCrm = () =>
      Promise.all([queryClient.invalidateQueries(trpc.booking.pathFilter()), queryClient.invalidateQueries(trpc.ops.pathFilter())]);

    const connect = () => {
      if (disposed) return;
      setState('connecting');
      source = new EventSource(`/api/events${buildingId ? `?buildingId=${encodeURIComponent(buildingId)}` : ''}`);
      source.addEventListener('ready', () => {
        attempts = 0;
        setState('live');
        if (connectedOnce) {
          void refreshChessboard();
          void refreshCrm();
        }
        connectedOnce = true;
      });
      source.addEventListener('grid', () => {
        void refreshChessboard();
        // the object's booking usually changed too (crm committed first)
        void refreshCrm();
      });
      source.addEventListener('chessboard', () => void refreshChessboard());
      source.addEventListener('crm', () => void refreshCrm());
      source.addEventListener('messenger', () => void queryClient.invalidateQueries(trpc.messenger.pathFilter()));
      source.addEventListener('resync', () => {
        void refreshChessboard();
        void refreshCrm();
        void queryClient.invalidateQueries(trpc.messenger.pathFilter());
      });
      source.addEventListener('signed-out', () => window.location.assign('/login'));
      source.onerror = () => {
        if (disposed) return;
        setState('offline');
        if (source?.readyState === EventSource.CLOSED) {
          source.close();
          attempts += 1;
          const delay = Math.min(30_000, 1000 * 2 ** Math.min(attempts, 5));
          retry = setTimeout(connect, delay);
        }
      };
    };
    connect();
    return () => {
      disposed = true;
      if (retry) clearTimeout(retry);
      source?.close();
    };
  }, [buildingId, queryClient, trpc]);

  return state;
}
