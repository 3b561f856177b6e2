'use client';
import { useSyncExternalStore } from 'react';

/**
 * One shared 1-second ticker for every countdown on the page: only the countdown elements subscribe,
 * so a 1,000-cell grid does not re-render each second. `serverOffsetMs` corrects the browser clock
 * with the server's (grid answers carry `serverNow`), so countdowns agree with the server's timers.
 */
let now = Date.now();
let serverOffsetMs = 0;
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;

function tick() {
  now = Date.now() + serverOffsetMs;
  for (const l of listeners) l();
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  if (!timer) {
    tick();
    timer = setInterval(tick, 1000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

export function setServerNow(serverNow: Date, receivedAt = Date.now()) {
  const offset = serverNow.getTime() - receivedAt;
  // ignore sub-second jitter: it would make countdowns jump back and forth
  if (Math.abs(offset - serverOffsetMs) > 1000) {
    serverOffsetMs = offset;
    tick();
  }
}

export const currentNow = () => Date.now() + serverOffsetMs;

/** The same 1-second ticker outside React: the chessboard writes its cells' timers straight into the DOM. */
export function subscribeNow(listener: () => void): () => void {
  return subscribe(listener);
}

/** The corrected current time, re-rendering the caller once a second. */
export function useNow(): number {
  return useSyncExternalStore(subscribe, () => now, () => 0);
}

const noSubscription = () => () => {};

/** useNow only while `active` (e.g. while a filter depends on the time); otherwise 0 and no re-renders. */
export function useNowWhile(active: boolean): number {
  return useSyncExternalStore(active ? subscribe : noSubscription, () => (active ? now : 0), () => 0);
}
