import type { Database } from '../platform/db';
import type { Logger } from '../platform/logger';
import { outboxChannel } from '../platform/outbox/write';

/**
 * Live updates for open chessboard grids. Every chessboard outbox write NOTIFYs `pin_outbox_chessboard`
 * at commit (the status change and its event commit together), and every crm outbox write NOTIFYs
 * `pin_outbox_crm`. One LISTEN connection per web process fans the notifications out to the SSE
 * streams of that process; each stream decides (with a tenant-scoped query) whether its grid changed.
 */
export type LiveSignal = 'chessboard' | 'crm' | 'resync';
type Subscriber = (signal: LiveSignal) => void;

interface Hub {
  subscribers: Set<Subscriber>;
  started: Promise<void> | null;
}

const g = globalThis as unknown as { __pinLiveHub?: Hub };

function hub(): Hub {
  g.__pinLiveHub ??= { subscribers: new Set(), started: null };
  return g.__pinLiveHub;
}

function emit(signal: LiveSignal): void {
  for (const fn of hub().subscribers) {
    try {
      fn(signal);
    } catch {
      // one broken stream must not stop the others
    }
  }
}

/**
 * Starts the process-wide LISTEN once. postgres.js re-establishes a dropped LISTEN connection by
 * itself and calls `onlisten` again; a re-listen means notifications may have been missed, so every
 * stream is told to resync.
 */
export function ensureLiveListener(database: Database, logger: Logger): Promise<void> {
  const h = hub();
  if (!h.started) {
    let chessboardListens = 0;
    h.started = Promise.all([
      database.sql.listen(outboxChannel('chessboard'), () => emit('chessboard'), () => {
        if (chessboardListens++ > 0) {
          logger.warn({ event: 'live_feed.relisten', channel: outboxChannel('chessboard') }, 'live feed LISTEN re-established');
          emit('resync');
        }
      }),
      database.sql.listen(outboxChannel('crm'), () => emit('crm')),
    ]).then(
      () => undefined,
      (e) => {
        h.started = null; // let the next stream try again
        throw e;
      },
    );
  }
  return h.started;
}

export function subscribeLive(fn: Subscriber): () => void {
  hub().subscribers.add(fn);
  return () => hub().subscribers.delete(fn);
}

export function liveSubscriberCount(): number {
  return hub().subscribers.size;
}
